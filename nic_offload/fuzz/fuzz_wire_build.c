/* libFuzzer harness for nw_wire_build: any field values and any buffer size
 * must yield either an error or headers that parse back to the same values. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "uet_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nw_wire_pkt_t pkt;
    if (size < sizeof pkt + 1)
        return 0;
    memcpy(&pkt, data, sizeof pkt);
    uint32_t cap = data[sizeof pkt] % (NW_WIRE_MAX_HDR + 8);

    /* Exact-size heap buffer so that ASan sees any overwrite. */
    uint8_t *buf = malloc(cap ? cap : 1);
    if (buf == NULL)
        return 0;
    int32_t hdr = nw_wire_build(&pkt, buf, cap);
    if (hdr > (int32_t)cap)
        abort();
    if (hdr >= 0) {
        nw_wire_pkt_t back;
        int32_t rc = nw_wire_parse(buf, (uint32_t)hdr, &back);
        /* A build may legitimately produce headers that announce a payload
         * (payload_length/shard_len) or carry a version the parser rejects. */
        if (rc < 0 && rc != NW_WIRE_ETRUNC && rc != NW_WIRE_EVERSION)
            abort();
        if (rc >= 0 && (back.pds.type != pkt.pds.type || back.pds.flags != pkt.pds.flags))
            abort();
        /* The parity header (next header 15) round-trips field by field. */
        if (rc >= 0 && back.pds.next_hdr == NW_NH_NW_PARITY &&
            (back.parity.base_psn != pkt.parity.base_psn || back.parity.k != pkt.parity.k ||
             back.parity.m != pkt.parity.m || back.parity.index != pkt.parity.index ||
             back.parity.shard_len != pkt.parity.shard_len))
            abort();
    } else if (hdr < NW_WIRE_ERR_FIRST || hdr > NW_WIRE_ERR_LAST) {
        abort();
    }
    free(buf);
    return 0;
}
