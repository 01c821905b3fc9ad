/* AF_PACKET TPACKET_V2 rings of one switch port (dataplane_ring.h). */
#define _GNU_SOURCE
#include "dataplane_ring.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#define RING_BLOCK_MIN (64u << 10)
#define RX_HEADROOM 128u  /* tpacket2_hdr, sockaddr_ll and the alignment before tp_mac */
#define TX_DATA_OFF ((uint32_t)(TPACKET2_HDRLEN - sizeof(struct sockaddr_ll)))
#define MAX_FRAME_LIMIT (64u << 10)

struct nw_dp_ring {
    int fd;
    uint8_t *map;
    size_t map_len;
    uint8_t *rx, *tx;
    uint32_t frame_size, block_size, per_block;
    uint32_t max_frame;
    uint32_t rx_n, rx_head, tx_n, tx_head, tx_pending;
    nw_dp_ring_stats_t st;
};

static uint8_t *slot_at(const nw_dp_ring_t *r, uint8_t *base, uint32_t i)
{
    return base + (size_t)(i / r->per_block) * r->block_size +
           (size_t)(i % r->per_block) * r->frame_size;
}

static uint32_t status_of(const uint8_t *slot)
{
    return __atomic_load_n(&((const struct tpacket2_hdr *)slot)->tp_status, __ATOMIC_ACQUIRE);
}

static void set_status(uint8_t *slot, uint32_t s)
{
    __atomic_store_n(&((struct tpacket2_hdr *)slot)->tp_status, s, __ATOMIC_RELEASE);
}

static int set_opt(int fd, int opt, int v)
{
    return setsockopt(fd, SOL_PACKET, opt, &v, sizeof(v));
}

static uint32_t align_up(uint32_t v, uint32_t a)
{
    return (v + a - 1) / a * a;
}

static int32_t interface_mtu(int fd, const char *ifname, uint32_t *mtu)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    strncpy(ifr.ifr_name, ifname, IF_NAMESIZE - 1);
    if (ioctl(fd, SIOCGIFMTU, &ifr) < 0)
        return -errno;
    *mtu = (uint32_t)ifr.ifr_mtu;
    return 0;
}

static int32_t request_ring(int fd, int opt, uint32_t frames, const nw_dp_ring_t *r,
                            uint32_t *blocks)
{
    *blocks = (frames + r->per_block - 1) / r->per_block;
    struct tpacket_req req = {.tp_block_size = r->block_size, .tp_block_nr = *blocks,
                              .tp_frame_size = r->frame_size,
                              .tp_frame_nr = *blocks * r->per_block};
    if (setsockopt(fd, SOL_PACKET, opt, &req, sizeof(req)) < 0)
        return -errno;
    return 0;
}

/* Socket options and rings in the order the kernel wants them, then bind. */
static int32_t setup(nw_dp_ring_t *r, unsigned ifindex, const nw_dp_ring_config_t *c)
{
    int fd = r->fd;
    if (set_opt(fd, PACKET_VERSION, TPACKET_V2) < 0)
        return -errno;
    set_opt(fd, PACKET_LOSS, 1);            /* a frame the kernel refuses is skipped */
    if (!c->tapped)
        set_opt(fd, PACKET_QDISC_BYPASS, 1); /* straight to the device (no taps see it) */
    set_opt(fd, PACKET_IGNORE_OUTGOING, 1); /* our own frames do not come back */
    uint32_t rx_blocks = 0, tx_blocks = 0;
    int32_t rc;
    if (c->rx_frames && (rc = request_ring(fd, PACKET_RX_RING, c->rx_frames, r, &rx_blocks)) < 0)
        return rc;
    if (c->tx_frames && (rc = request_ring(fd, PACKET_TX_RING, c->tx_frames, r, &tx_blocks)) < 0)
        return rc;
    r->rx_n = rx_blocks * r->per_block;
    r->tx_n = tx_blocks * r->per_block;
    r->map_len = (size_t)(rx_blocks + tx_blocks) * r->block_size;
    void *m = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (m == MAP_FAILED) {
        r->map_len = 0;
        return -errno;
    }
    r->map = m;
    r->rx = r->map;
    r->tx = r->map + (size_t)rx_blocks * r->block_size;
    /* receive every protocol only with RX ring; a send-only port binds silent (0) */
    struct sockaddr_ll a = {.sll_family = AF_PACKET,
                            .sll_protocol = c->rx_frames ? htons(ETH_P_ALL) : 0,
                            .sll_ifindex = (int)ifindex};
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
        return -errno;
    return 0;
}

nw_dp_ring_t *nw_dp_ring_open(const char *ifname, const nw_dp_ring_config_t *c, int32_t *err)
{
    *err = -EINVAL;
    if (!ifname || !c || (!c->rx_frames && !c->tx_frames) || c->max_frame > MAX_FRAME_LIMIT ||
        c->rx_frames > (1u << 20) || c->tx_frames > (1u << 20))
        return NULL;
    unsigned ifindex = if_nametoindex(ifname);
    if (ifindex == 0) {
        *err = -ENODEV;
        return NULL;
    }
    nw_dp_ring_t *r = calloc(1, sizeof(*r));
    if (!r) {
        *err = -ENOMEM;
        return NULL;
    }
    r->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int32_t rc = -errno;
    if (r->fd < 0)
        goto fail;
    uint32_t max_frame = c->max_frame;
    if (max_frame == 0) {
        uint32_t mtu = 0;
        if ((rc = interface_mtu(r->fd, ifname, &mtu)) < 0)
            goto fail;
        max_frame = mtu + 18; /* Ethernet header and one VLAN tag */
        if (max_frame > MAX_FRAME_LIMIT)
            max_frame = MAX_FRAME_LIMIT;
    }
    r->max_frame = max_frame;
    r->frame_size = align_up(max_frame + RX_HEADROOM, TPACKET_ALIGNMENT);
    r->block_size = RING_BLOCK_MIN;
    while (r->block_size < r->frame_size)
        r->block_size <<= 1;
    r->per_block = r->block_size / r->frame_size;
    if ((rc = setup(r, ifindex, c)) < 0)
        goto fail;
    *err = 0;
    return r;
fail:
    nw_dp_ring_close(r);
    *err = rc;
    return NULL;
}

void nw_dp_ring_close(nw_dp_ring_t *r)
{
    if (!r)
        return;
    if (r->map_len)
        munmap(r->map, r->map_len);
    if (r->fd >= 0)
        close(r->fd);
    free(r);
}

int32_t nw_dp_ring_fd(const nw_dp_ring_t *r)
{
    return r->fd;
}

uint32_t nw_dp_ring_max_frame(const nw_dp_ring_t *r)
{
    return r->max_frame;
}

int32_t nw_dp_ring_rx_peek(nw_dp_ring_t *r, nw_dp_rx_frame_t *out)
{
    if (!r->rx_n)
        return 0;
    uint8_t *slot = slot_at(r, r->rx, r->rx_head);
    if (!(status_of(slot) & TP_STATUS_USER))
        return 0;
    const struct tpacket2_hdr *h = (const struct tpacket2_hdr *)slot;
    uint32_t len = h->tp_snaplen;
    /* never trust the header beyond the slot */
    if (h->tp_mac >= r->frame_size || len > r->frame_size - h->tp_mac)
        len = h->tp_mac >= r->frame_size ? 0 : r->frame_size - h->tp_mac;
    out->data = slot + (h->tp_mac < r->frame_size ? h->tp_mac : 0);
    out->len = len;
    out->wire_len = h->tp_len;
    out->rx_realtime_ns = (uint64_t)h->tp_sec * 1000000000ull + h->tp_nsec;
    r->st.rx_frames++;
    r->st.rx_bytes += h->tp_len;
    return 1;
}

void nw_dp_ring_rx_release(nw_dp_ring_t *r)
{
    set_status(slot_at(r, r->rx, r->rx_head), TP_STATUS_KERNEL);
    r->rx_head = r->rx_head + 1 == r->rx_n ? 0 : r->rx_head + 1;
}

uint8_t *nw_dp_ring_tx_slot(nw_dp_ring_t *r)
{
    if (!r->tx_n)
        return NULL;
    uint8_t *slot = slot_at(r, r->tx, r->tx_head);
    uint32_t s = status_of(slot);
    if (s == TP_STATUS_WRONG_FORMAT) {
        r->st.tx_errors++; /* the kernel refused that frame; the slot is ours again */
        set_status(slot, TP_STATUS_AVAILABLE);
        s = TP_STATUS_AVAILABLE;
    }
    if (s != TP_STATUS_AVAILABLE)
        return NULL;
    return slot + TX_DATA_OFF;
}

void nw_dp_ring_tx_commit(nw_dp_ring_t *r, uint32_t len)
{
    uint8_t *slot = slot_at(r, r->tx, r->tx_head);
    ((struct tpacket2_hdr *)slot)->tp_len = len;
    set_status(slot, TP_STATUS_SEND_REQUEST);
    r->tx_head = r->tx_head + 1 == r->tx_n ? 0 : r->tx_head + 1;
    r->tx_pending++;
    r->st.tx_frames++;
    r->st.tx_bytes += len;
}

int32_t nw_dp_ring_tx_copy(nw_dp_ring_t *r, const uint8_t *frame, uint32_t len)
{
    if (len > r->frame_size - TX_DATA_OFF || len > r->max_frame) {
        r->st.tx_too_long++;
        return -2;
    }
    uint8_t *dst = nw_dp_ring_tx_slot(r);
    if (!dst) {
        nw_dp_ring_tx_flush(r); /* maybe the kernel only waits for a kick */
        dst = nw_dp_ring_tx_slot(r);
        if (!dst) {
            r->st.tx_ring_full++;
            return -1;
        }
    }
    memcpy(dst, frame, len);
    nw_dp_ring_tx_commit(r, len);
    return 0;
}

uint32_t nw_dp_ring_tx_flush(nw_dp_ring_t *r)
{
    uint32_t n = r->tx_pending;
    if (!n)
        return 0;
    r->tx_pending = 0;
    if (send(r->fd, NULL, 0, MSG_DONTWAIT) < 0) {
        if (errno == EAGAIN || errno == ENOBUFS)
            r->tx_pending = n; /* the device refused a frame for now: the kernel keeps it
                                  (and those behind it) in the ring; send again later */
        else
            r->st.tx_errors++;
    }
    return n;
}

uint32_t nw_dp_ring_tx_pending(const nw_dp_ring_t *r)
{
    return r->tx_pending;
}

void nw_dp_ring_stats(nw_dp_ring_t *r, nw_dp_ring_stats_t *out)
{
    struct tpacket_stats ks;
    socklen_t len = sizeof(ks);
    if (r->rx_n && getsockopt(r->fd, SOL_PACKET, PACKET_STATISTICS, &ks, &len) == 0)
        r->st.rx_kernel_drops += ks.tp_drops; /* the kernel resets them on every read */
    *out = r->st;
}
