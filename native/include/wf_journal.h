/* wf_journal.h — the current-input journal of a fuzz worker process.
 *
 * A worker copies every input into a small MAP_SHARED file before running it, so the input
 * survives the process however it dies (stack overflow, abort with signals blocked, SIGKILL);
 * the campaign supervisor reads it back and saves it as a finding. One journal per process.
 * Doing the copy in C keeps it inside the harness's one C call per input (a copy from Python
 * would add a call of its own to every input). The format is shared with
 * fuzz/engine/journal.py, which reads it:
 *
 *   offset 0    u64  execs   inputs recorded by this process
 *   offset 8    u64  length  length of the input below
 *   offset 16   ...  data    the input
 *
 * The bytes are copied before the length and count are stored.
 */
#ifndef WALKFUZZ_WF_JOURNAL_H
#define WALKFUZZ_WF_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

/* cffi:begin */
#define WF_JOURNAL_HEADER_SIZE 16

/* Create (truncate) and map the journal at path with room for capacity bytes of input.
   0 on success, else -errno; replaces a journal opened before. */
int wf_journal_open(const char *path, size_t capacity);
/* Copy one input into the journal and count it; grows the file for a larger input (if it
   cannot, the input is truncated to what fits). No-op when no journal is open. */
void wf_journal_record(const uint8_t *data, size_t size);
/* Inputs recorded since the journal was opened. */
uint64_t wf_journal_execs(void);
/* Unmap and close the journal (the file stays). */
void wf_journal_close(void);
/* cffi:end */

#endif
