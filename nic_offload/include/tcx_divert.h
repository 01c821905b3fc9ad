/* Takes an endpoint's datagrams away from the kernel's IP/UDP stack.
 *
 * tx=packet reads its datagrams from an AF_PACKET ring, whose tap sees every
 * frame before the interface's ingress hook. Without more, the kernel would
 * then also carry each datagram up its IP and UDP stack to the endpoint's UDP
 * socket: the per-packet work that tx=packet is there to avoid. This attaches
 * a small eBPF program at the interface's tcx ingress hook (Linux 6.6+) that
 * drops IPv4/UDP frames for local_ip:local_port (no IP options, not a
 * fragment, at most max_frame bytes: larger ones, such as GRO or GSO
 * super-packets, and everything else go on to the stack). The program is
 * written out in BPF instructions here, so no compiler or libbpf is needed; it
 * is held by a BPF link that the kernel detaches when its file descriptor is
 * closed, also when the process dies.
 */
#ifndef NETWEFT_TCX_DIVERT_H
#define NETWEFT_TCX_DIVERT_H

#include <stdint.h>

/* The link's file descriptor (>= 0), or NW_EPERM without CAP_BPF/CAP_NET_ADMIN,
 * or NW_ESYS (errno set: EINVAL on kernels without tcx). */
int32_t nw_tcx_divert_attach(uint32_t ifindex, uint32_t local_ip, uint16_t local_port,
                             uint32_t max_frame);

#endif
