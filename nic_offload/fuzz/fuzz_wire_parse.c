/* libFuzzer harness for nw_wire_parse: arbitrary bytes must never crash the
 * parser, and whatever it accepts must survive build -> parse unchanged; the
 * trim helper (nw_wire_trim) runs on every input too.
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

/* nw_wire_trim (what a switch does) on the same bytes: it never writes past
 * the packet, keeps at most NW_WIRE_TRIM_KEEP bytes, and a request whose
 * headers parsed whole still parses after the cut, now marked trimmed. */
static void check_trim(uint8_t *buf, uint32_t size, const nw_wire_pkt_t *before)
{
    int32_t n = nw_wire_trim(buf, size);
    if (n < 0) {
        if (n != NW_WIRE_ETRUNC && n != NW_WIRE_ETYPE)
            abort();
        return;
    }
    if ((uint32_t)n > size || n > NW_WIRE_TRIM_KEEP)
        abort();
    nw_wire_pkt_t after;
    int32_t hl = nw_wire_parse(buf, (uint32_t)n, &after);
    if (before && before->hdr_len <= (uint32_t)n && (hl < 0 || !after.trimmed))
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
    check_trim(copy, (uint32_t)size, hdr >= 0 ? &pkt : NULL);
    free(copy);
    return 0;
}
