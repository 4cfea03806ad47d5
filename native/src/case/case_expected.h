/* case_expected.h — internal: section 11 (EXPECTED) hooks for the case decoder and encoder
 * (docs/case-format.md §2). The decoded section belongs to the mapped case, like section 9. */
#ifndef WALKFUZZ_CASE_EXPECTED_H
#define WALKFUZZ_CASE_EXPECTED_H

#include <stddef.h>
#include <stdint.h>

#include "case_reader.h"
#include "wf_case_expected.h"

/* Forget the section (a case without one). */
void wf_case_expected_clear(void);
/* Decode a section 11 payload (the reader is bounded to it): methods = the case's method
   count, queue_ops = its section 9 op count (sections 2 and 9 precede). 0 or a status. */
int wf_case_expected_decode(case_reader *r, uint32_t methods, uint32_t queue_ops);
/* Bytes of e encoded as section 11 with its header; write them to out. */
size_t wf_case_expected_encoded_size(const wf_case_expected *e);
void wf_case_expected_write(const wf_case_expected *e, uint8_t *out);

#endif /* WALKFUZZ_CASE_EXPECTED_H */
