/* C-level checks of the receive PSN window (sack.c) across the 2^32 wrap:
 * classification, cumulative advance, SACK bitmaps and the UUD slide.
 * Exits non-zero with a message on the first failed check. */
#include <stdio.h>
#include <stdlib.h>

#include "engine.h"
#include "sack.h"

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                       \
        }                                                                  \
    } while (0)

int main(void)
{
    nw_rx_window_t w;
    CHECK(nw_rxw_init(&w, 100) == NW_EINVAL); /* not a power of two */
    CHECK(nw_rxw_init(&w, 128) == NW_OK);
    uint32_t start = 0xfffffff0u;             /* 16 PSNs before the wrap */
    nw_rxw_reset(&w, start);
    CHECK(nw_rxw_classify(&w, start) == NW_PSN_NEW);
    CHECK(nw_rxw_classify(&w, start - 1) == NW_PSN_DUP);
    CHECK(nw_rxw_classify(&w, start + 127) == NW_PSN_NEW);
    CHECK(nw_rxw_classify(&w, start + 128) == NW_PSN_OUT_OF_WINDOW);

    /* Receive every PSN of [start, start+40) except start+20, in reverse. */
    for (int i = 39; i >= 0; i--)
        if (i != 20) {
            CHECK(nw_rxw_classify(&w, start + (uint32_t)i) == NW_PSN_NEW);
            nw_rxw_mark(&w, start + (uint32_t)i);
            CHECK(nw_rxw_classify(&w, start + (uint32_t)i) == NW_PSN_DUP);
        }
    CHECK(w.cum == start + 19);                /* crossed 0xffffffff -> 0x3 */
    CHECK(w.count == 19);
    uint64_t sack = nw_rxw_sack(&w, start + 20);
    CHECK((sack & 1) == 0);                    /* the hole */
    CHECK(((sack >> 1) & ((1ull << 19) - 1)) == (1ull << 19) - 1);
    CHECK((sack >> 20) == 0);
    nw_rxw_mark(&w, start + 20);
    CHECK(w.cum == start + 39 && w.count == 0);
    CHECK(nw_rxw_sack(&w, start) == ~0ull >> 24); /* 40 PSNs at or below cum */

    /* UUD: sliding forward gives up the gap and keeps duplicates suppressed. */
    nw_rxw_mark(&w, start + 45);
    nw_rxw_slide_to(&w, start + 45 + 300);
    CHECK(nw_rxw_classify(&w, start + 45 + 300) == NW_PSN_NEW);
    CHECK(nw_rxw_classify(&w, start + 45) == NW_PSN_DUP);
    CHECK(w.count == 0);
    nw_rxw_destroy(&w);
    puts("sack window checks passed");
    return 0;
}
