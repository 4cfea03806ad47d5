/* The current-input journal of a fuzz worker (see wf_journal.h for the format and why). */
#include "wf_journal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static struct {
    uint8_t *map;
    size_t map_size;
    int fd;
    uint64_t execs;
} journal = {NULL, 0, -1, 0};

/* Size the file and map it; on failure the journal is left closed. */
static int map_journal(size_t capacity) {
    size_t size = WF_JOURNAL_HEADER_SIZE + capacity;
    if (ftruncate(journal.fd, (off_t)size) != 0) return -errno;
    void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, journal.fd, 0);
    if (map == MAP_FAILED) return -errno;
    journal.map = map;
    journal.map_size = size;
    return 0;
}

void wf_journal_close(void) {
    if (journal.map != NULL) munmap(journal.map, journal.map_size);
    if (journal.fd >= 0) close(journal.fd);
    journal.map = NULL;
    journal.map_size = 0;
    journal.fd = -1;
}

int wf_journal_open(const char *path, size_t capacity) {
    wf_journal_close();
    journal.execs = 0;
    journal.fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (journal.fd < 0) return -errno;
    int rc = map_journal(capacity);
    if (rc != 0) wf_journal_close();
    return rc;
}

/* Remap with room for `size` bytes (doubling, to keep growth rare). */
static int grow(size_t size) {
    size_t capacity = 2 * (journal.map_size - WF_JOURNAL_HEADER_SIZE);
    if (capacity < size) capacity = size;
    munmap(journal.map, journal.map_size);
    journal.map = NULL;
    return map_journal(capacity);
}

void wf_journal_record(const uint8_t *data, size_t size) {
    if (journal.map == NULL) return;
    if (WF_JOURNAL_HEADER_SIZE + size > journal.map_size && grow(size) != 0) {
        if (journal.map == NULL && map_journal(0) != 0) return;
        size = journal.map_size - WF_JOURNAL_HEADER_SIZE;
    }
    memcpy(journal.map + WF_JOURNAL_HEADER_SIZE, data, size);
    journal.execs++;
    uint64_t header[2] = {journal.execs, (uint64_t)size};
    memcpy(journal.map, header, sizeof header);
}

uint64_t wf_journal_execs(void) { return journal.execs; }
