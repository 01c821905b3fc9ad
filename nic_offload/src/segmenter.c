/* Message segmentation arithmetic. */
#include "segmenter.h"

#include "uet_wire.h"

/* Largest headers the engine writes in front of data: RUD/ROD request + SES
 * standard request (a read response's 12 + 20 bytes is smaller). */
#define NW_SEG_DATA_HDR (NW_WIRE_PDS_REQ_LEN + NW_WIRE_SES_STD_LEN)

uint32_t nw_seg_count(uint64_t len, uint32_t max_payload)
{
    if (len == 0)
        return 1;
    return (uint32_t)((len + max_payload - 1) / max_payload);
}

uint32_t nw_seg_len(uint64_t len, uint64_t off, uint32_t max_payload)
{
    uint64_t left = off < len ? len - off : 0;
    return (uint32_t)(left < max_payload ? left : max_payload);
}

uint32_t nw_seg_max_payload(uint32_t mtu)
{
    if (mtu <= NW_SEG_DATA_HDR)
        return 0;
    uint32_t p = mtu - NW_SEG_DATA_HDR;
    return p > NW_WIRE_MAX_PAYLOAD ? NW_WIRE_MAX_PAYLOAD : p;
}
