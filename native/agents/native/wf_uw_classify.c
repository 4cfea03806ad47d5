/* Classify a walk against the truth: missing, extra, wrong function, truncated, cycle. */
#include "wf_unwind.h"

/* Is a[0..n) a subsequence of b[0..m)? */
static int subsequence(const int32_t *a, uint32_t n, const int32_t *b, uint32_t m) {
    uint32_t j = 0;
    for (uint32_t i = 0; i < m && j < n; i++)
        if (b[i] == a[j]) j++;
    return j == n;
}

int wf_uw_classify(const int32_t *walked, uint32_t n, const int32_t *expected, uint32_t m,
                   int cycle, int32_t *first_diff) {
    uint32_t common = n < m ? n : m;
    uint32_t i = 0;
    while (i < common && walked[i] == expected[i]) i++;
    *first_diff = (i == n && n == m) ? -1 : (int32_t)i;
    if (cycle) return WF_UW_CYCLE_FRAMES;
    if (*first_diff < 0) return WF_UW_VALID;
    if (n < m && i == n) return WF_UW_TRUNCATED;
    if (n < m && subsequence(walked, n, expected, m)) return WF_UW_MISSING;
    if (n > m && subsequence(expected, m, walked, n)) return WF_UW_EXTRA;
    return WF_UW_WRONG_FUNCTION;
}
