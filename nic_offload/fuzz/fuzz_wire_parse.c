/* libFuzzer harness for nw_wire_parse: arbitrary bytes must never crash the
 * parser, and whatever it accepts must survive build -> parse unchanged.
 * Build: see nic_offload/fuzz/Makefile (clang, -fsanitize=fuzzer,address). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "uet_wire.h"

/* Abort (a finding) when a parse result breaks the codec's own invariants. */
static void check_accepted(const uint8_t *data, uint32_t size, const nw_wire_pkt_t *pkt,
                           int32_t hdr)
{
    if ((uint32_t)hdr != pkt->hdr_len || pkt->hdr_len > size ||
        pkt->hdr_len + pkt->payload_len != size || hdr > NW_WIRE_MAX_HDR)
        abort();

    uint8_t again[NW_WIRE_MAX_PKT];
    int32_t built = nw_wire_build(pkt, again, sizeof again);
    if (built != hdr)
        abort();
    memcpy(again + built, data + hdr, pkt->payload_len);

    nw_wire_pkt_t reparsed;
    int32_t rc = nw_wire_parse(again, size, &reparsed);
    if (rc != hdr || memcmp(&reparsed, pkt, sizeof reparsed) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 2 * NW_WIRE_MAX_PKT)
        return 0;
    /* Parse from an exact-size heap copy so that ASan sees any overread. */
    uint8_t *copy = malloc(size ? size : 1);
    if (copy == NULL)
        return 0;
    memcpy(copy, data, size);

    nw_wire_pkt_t pkt;
    int32_t hdr = nw_wire_parse(copy, (uint32_t)size, &pkt);
    if (hdr >= 0)
        check_accepted(copy, (uint32_t)size, &pkt, hdr);
    else if (hdr < NW_WIRE_ERR_FIRST || hdr > NW_WIRE_ERR_LAST)
        abort();
    free(copy);
    return 0;
}
