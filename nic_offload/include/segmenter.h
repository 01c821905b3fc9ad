/* Segmentation of messages into MTU-sized packets. Every packet of a message
 * except the last carries exactly max_payload bytes, so a packet's index in
 * its message is message_offset / max_payload. */
#ifndef NETWEFT_SEGMENTER_H
#define NETWEFT_SEGMENTER_H

#include <stdint.h>

/* Packets a message of `len` bytes needs (a zero-length message needs one). */
uint32_t nw_seg_count(uint64_t len, uint32_t max_payload);
/* Payload bytes of the packet that starts at `off`. */
uint32_t nw_seg_len(uint64_t len, uint64_t off, uint32_t max_payload);
/* Largest payload per packet for a UDP payload size `mtu` (0 if too small). */
uint32_t nw_seg_max_payload(uint32_t mtu);

#endif
