/* Per-port pcap files written by the loop: <iface>_in.pcap (frames received on
 * the port) and <iface>_out.pcap (frames sent), as BMv2's --pcap and the Python
 * switch process write them.  Records carry the wall-clock time in microseconds.
 */
#ifndef NW_DATAPLANE_PCAP_H
#define NW_DATAPLANE_PCAP_H

#include <stdint.h>

#define NW_DP_PCAP_IN 0u
#define NW_DP_PCAP_OUT 1u

typedef struct nw_dp_pcap nw_dp_pcap_t;

nw_dp_pcap_t *nw_dp_pcap_new(void);
/* Open both files of `port` (0..510) and write their headers; 0 or -errno. */
int32_t nw_dp_pcap_open(nw_dp_pcap_t *p, uint32_t port, const char *in_path,
                        const char *out_path);
/* One record (nothing if the port has no files); counts write errors. */
void nw_dp_pcap_write(nw_dp_pcap_t *p, uint32_t port, uint32_t direction,
                      const uint8_t *frame, uint32_t len);
/* Flush the files if anything was written since the last flush (the loop calls it
 * after every pass, so a reader sees a frame once the pass that took it is over). */
void nw_dp_pcap_flush(nw_dp_pcap_t *p);
uint64_t nw_dp_pcap_errors(const nw_dp_pcap_t *p);
/* Flush and close every file. */
void nw_dp_pcap_free(nw_dp_pcap_t *p);

#endif
