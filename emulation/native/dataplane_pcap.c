/* Per-port pcap files written by the loop (dataplane_pcap.h). */
#define _GNU_SOURCE
#include "dataplane_pcap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define PCAP_PORTS 511u
#define SNAPLEN 262144u
#define DLT_EN10MB 1u

struct nw_dp_pcap {
    FILE *files[PCAP_PORTS][2];
    uint64_t errors;
    uint32_t dirty;       /* records written since the last flush */
};

nw_dp_pcap_t *nw_dp_pcap_new(void)
{
    return calloc(1, sizeof(nw_dp_pcap_t));
}

static FILE *open_one(const char *path, int32_t *err)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        *err = -errno;
        return NULL;
    }
    /* the classic header: magic, version 2.4, zone, sigfigs, snaplen, link type */
    uint32_t head[6] = {0xa1b2c3d4u, 0x00040002u, 0, 0, SNAPLEN, DLT_EN10MB};
    if (fwrite(head, sizeof(head), 1, f) != 1) {
        *err = -EIO;
        fclose(f);
        return NULL;
    }
    return f;
}

int32_t nw_dp_pcap_open(nw_dp_pcap_t *p, uint32_t port, const char *in_path,
                        const char *out_path)
{
    if (port >= PCAP_PORTS || p->files[port][0] || p->files[port][1])
        return -EINVAL;
    int32_t err = 0;
    FILE *in = open_one(in_path, &err);
    if (!in)
        return err;
    FILE *out = open_one(out_path, &err);
    if (!out) {
        fclose(in);
        return err;
    }
    p->files[port][NW_DP_PCAP_IN] = in;
    p->files[port][NW_DP_PCAP_OUT] = out;
    return 0;
}

void nw_dp_pcap_write(nw_dp_pcap_t *p, uint32_t port, uint32_t direction,
                      const uint8_t *frame, uint32_t len)
{
    if (port >= PCAP_PORTS || direction > NW_DP_PCAP_OUT)
        return;
    FILE *f = p->files[port][direction];
    if (!f)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint32_t kept = len < SNAPLEN ? len : SNAPLEN;
    uint32_t rec[4] = {(uint32_t)ts.tv_sec, (uint32_t)(ts.tv_nsec / 1000), kept, len};
    if (fwrite(rec, sizeof(rec), 1, f) != 1 || fwrite(frame, 1, kept, f) != kept)
        p->errors++;
    p->dirty = 1;
}

void nw_dp_pcap_flush(nw_dp_pcap_t *p)
{
    if (!p->dirty)
        return;
    p->dirty = 0;
    for (uint32_t i = 0; i < PCAP_PORTS; i++)
        for (uint32_t d = 0; d < 2; d++)
            if (p->files[i][d] && fflush(p->files[i][d]) != 0)
                p->errors++;
}

uint64_t nw_dp_pcap_errors(const nw_dp_pcap_t *p)
{
    return p->errors;
}

void nw_dp_pcap_free(nw_dp_pcap_t *p)
{
    if (!p)
        return;
    for (uint32_t i = 0; i < PCAP_PORTS; i++)
        for (uint32_t d = 0; d < 2; d++)
            if (p->files[i][d])
                fclose(p->files[i][d]);
    free(p);
}
