/* The engine: configuration, lifecycle, memory regions and peers, work-request
 * posting, timers and completions. The packet paths live in receive.c
 * (nw_input) and transmit.c (nw_output); every header is read and written
 * through the wire codec (uet_wire.h). */
#include <stdlib.h>
#include <string.h>

#include "engine_state.h"
#include "segmenter.h"
#include "uet_wire.h"

#define NW_UUD_MAX_PKTS 64u

/* ------------------------------------------------------------------ config */

void nw_config_default(nw_config_t *c)
{
    memset(c, 0, sizeof(*c));
    c->local_port = NW_WIRE_UDP_PORT;
    c->dst_port = NW_WIRE_UDP_PORT;
    c->mtu = 1472;
    c->entropy_base = 49152;
    c->entropy_count = 64;
    c->entropy_burst = 2; /* a pair per entropy value: one GSO send (see engine.h) */
    c->window_pkts = 512;
    c->rto_init_ns = 1000000ull;
    c->rto_max_ns = 200000000ull;
    c->max_retries = 12;
    c->reorder_pkts = 8;
    c->ack_every_pkts = 4;
    c->ack_delay_ns = 20000ull;
    c->ooo_ack_every_pkts = 16;
    c->uud_timeout_ns = 5000000ull;
    c->max_peers = 64;
    c->max_mrs = 256;
    c->max_wrs = 4096;
    c->max_recvs = 4096;
    c->seed = 1;
    c->cc_target_ns = 0; /* NSCC: 3/4 of the base RTT */
    c->cc_min_pkts = 1;
    /* No congestion control by default: on a CPU-bound host (veth, loopback)
     * scheduling delay reads as queueing delay and nothing marks ECN; see
     * docs/congestion.md for when to choose which mode. */
    c->cc_mode = NW_CC_MODE_NONE;
    c->link_rate_mbps = 10000;
    c->cc_base_rtt_ns = 0;
    c->cc_spec_bytes = 0;
    c->cc_pull_bytes = 0;
    c->rto_per_packet = 0;
}

const char *nw_config_check(const nw_config_t *c)
{
    if (!c)
        return "config is NULL";
    if (nw_seg_max_payload(c->mtu) == 0 || c->mtu > NW_WIRE_MAX_PKT)
        return "mtu: must leave room for the 56 header bytes and be at most 16447";
    if (c->window_pkts < 64 || c->window_pkts > NW_MAX_WINDOW ||
        (c->window_pkts & (c->window_pkts - 1)))
        return "window_pkts: must be a power of two between 64 and 4096";
    if (c->entropy_count == 0 || (uint32_t)c->entropy_base + c->entropy_count > 65536)
        return "entropy_count: must be >= 1 and entropy_base + entropy_count <= 65536";
    if (c->rto_init_ns == 0 || c->rto_max_ns < c->rto_init_ns)
        return "rto_init_ns/rto_max_ns: need 0 < rto_init_ns <= rto_max_ns";
    if (c->max_peers == 0 || c->max_peers > 4095)
        return "max_peers: must be between 1 and 4095";
    if (c->max_mrs == 0 || c->max_mrs > 65535)
        return "max_mrs: must be between 1 and 65535";
    if (c->max_wrs == 0 || c->max_wrs > (1u << 24) || c->max_recvs == 0 ||
        c->max_recvs > (1u << 24))
        return "max_wrs/max_recvs: must be between 1 and 2^24";
    if (c->ack_every_pkts == 0 || c->reorder_pkts == 0)
        return "ack_every_pkts/reorder_pkts: must be >= 1";
    if (c->ooo_ack_every_pkts == 0 || c->ooo_ack_every_pkts > 32)
        return "ooo_ack_every_pkts: must be between 1 and 32";
    if (c->cc_min_pkts == 0 || c->cc_min_pkts > c->window_pkts)
        return "cc_min_pkts: must be between 1 and window_pkts";
    if (c->uud_timeout_ns == 0)
        return "uud_timeout_ns: must be > 0";
    if (c->cc_mode >= NW_CC_MODE_COUNT)
        return "cc_mode: must be one of NW_CC_MODE_* (0 none, 1 nscc, 2 rccc, 3 nscc+rccc, "
               "4 dcqcn)";
    if (c->link_rate_mbps == 0 || c->link_rate_mbps > 10000000)
        return "link_rate_mbps: must be between 1 and 10000000 (10 Tbit/s)";
    if (c->cc_pull_bytes > (1u << 22) || (c->cc_pull_bytes && c->cc_pull_bytes < c->mtu))
        return "cc_pull_bytes: must be 0 (4 x mtu) or between mtu and 4 MiB";
    if (c->rto_per_packet > 1)
        return "rto_per_packet: must be 0 or 1";
    if (c->cc_spec_bytes > (1u << 22))
        return "cc_spec_bytes: must be at most 4 MiB (0 = one BDP)";
    return NULL;
}

nw_engine_t *nw_engine_new(const nw_config_t *cfg)
{
    if (nw_config_check(cfg))
        return NULL;
    nw_engine_t *e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    e->cfg = *cfg;
    e->max_payload = nw_seg_max_payload(cfg->mtu);
    e->wmask = cfg->window_pkts - 1;
    e->rng = cfg->seed;
    e->wr_credits = cfg->max_wrs;
    e->recv_credits = cfg->max_recvs;
    if (nw_pdc_table_init(e) != NW_OK || nw_wr_init(e) != NW_OK ||
        nw_mr_table_init(&e->mrs, cfg->max_mrs) != NW_OK ||
        nw_rq_init(&e->rq, cfg->max_recvs) != NW_OK ||
        nw_cq_init(&e->cq, cfg->max_wrs + cfg->max_recvs) != NW_OK) {
        nw_engine_free(e);
        return NULL;
    }
    return e;
}

void nw_engine_free(nw_engine_t *e)
{
    if (!e)
        return;
    nw_pdc_table_destroy(e);
    nw_wr_destroy(e);
    nw_mr_table_destroy(&e->mrs);
    nw_rq_destroy(&e->rq);
    nw_cq_destroy(&e->cq);
    nw_trace_start(e, 0);
    free(e);
}

uint32_t nw_max_payload(const nw_engine_t *e)
{
    return e->max_payload;
}

/* ---------------------------------------------------- memory and peers */

int32_t nw_mr_register(nw_engine_t *e, void *base, uint64_t len, uint32_t access,
                       uint32_t *rkey_out)
{
    if (!rkey_out)
        return NW_EINVAL;
    return nw_mr_table_add(&e->mrs, base, len, access, rkey_out);
}

int32_t nw_mr_deregister(nw_engine_t *e, uint32_t rkey)
{
    return nw_mr_table_remove(&e->mrs, rkey);
}

int32_t nw_peer_add(nw_engine_t *e, uint32_t ip, uint16_t port, uint8_t mode,
                    uint32_t *peer_out)
{
    if (mode > NW_MODE_UUD || !peer_out)
        return NW_EINVAL;
    if (port == 0)
        port = e->cfg.dst_port;
    nw_pdc_t *p = nw_pdc_find(e, ip, mode, port);
    if (!p)
        p = nw_pdc_create(e, ip, port, mode);
    if (!p)
        return NW_EAGAIN;
    p->established = 1; /* the application names it: never reclaimed as half-open */
    p->named = 1;
    *peer_out = nw_pdc_index(e, p);
    return NW_OK;
}

static nw_pdc_t *peer_get(nw_engine_t *e, uint32_t peer)
{
    if (peer >= e->cfg.max_peers || !e->pdcs[peer].in_use)
        return NULL;
    return &e->pdcs[peer];
}

int32_t nw_peer_close(nw_engine_t *e, uint32_t peer)
{
    nw_pdc_t *p = peer_get(e, peer);
    if (!p)
        return NW_ENOPEER;
    p->named = 0; /* the application gives the handle up */
    nw_pdc_close(e, p, 1);
    return NW_OK;
}

int32_t nw_peer_info(const nw_engine_t *e, uint32_t peer, uint32_t *ip, uint16_t *port,
                     uint8_t *mode)
{
    const nw_pdc_t *p = peer_get((nw_engine_t *)e, peer);
    if (!p)
        return NW_ENOPEER;
    if (ip)
        *ip = p->ip;
    if (port)
        *port = p->port;
    if (mode)
        *mode = p->mode;
    return NW_OK;
}

int32_t nw_peer_set_coding(nw_engine_t *e, uint32_t peer, uint32_t k, uint32_t m)
{
    nw_pdc_t *p = peer_get(e, peer);
    if (!p)
        return NW_ENOPEER;
    int32_t r = nw_ec_set(e, p, k, m);
    if (r == NW_OK)
        nw_pdc_activate(e, p); /* a closed block's parity may now be due */
    return r;
}

int32_t nw_peer_path(const nw_engine_t *e, uint32_t peer, nw_path_stats_t *out)
{
    const nw_pdc_t *p = peer_get((nw_engine_t *)e, peer);
    if (!p)
        return NW_ENOPEER;
    if (!out)
        return NW_EINVAL;
    memset(out, 0, sizeof(*out));
    out->srtt_ns = p->srtt;
    out->rttvar_ns = p->rttvar;
    out->min_rtt_ns = p->cc.min_rtt;
    out->tx_bytes = p->tx_req_bytes;
    out->rx_bytes = p->peer_rx_bytes;
    out->data_pkts = p->pdc_data_pkts;
    out->retransmits = p->pdc_retransmits;
    out->rto_ns = p->rto_cur;
    out->rack_wait_ns = p->srtt + p->srtt / 4 + p->reo_extra_ns;
    if (p->ec_tx) {
        out->k = p->ec_tx->k;
        out->m = p->ec_tx->m;
    }
    const nw_cc_t *c = &p->cc;
    out->cc_mode = c->mode;
    out->cwnd_bytes = c->nscc_on ? c->nscc.cwnd : 0;
    out->rate_mbps = c->dcqcn_on ? c->dcqcn.rc_kbps / 1000u : 0;
    if (c->rccc_on) {
        uint64_t allow = c->cr_tx.granted + c->cr_tx.spec_used + c->cr_tx.spec_left;
        out->credit_bytes = allow > c->cr_tx.sent ? allow - c->cr_tx.sent : 0;
    }
    return NW_OK;
}

/* ---------------------------------------------------------- posting */

static int32_t post(nw_engine_t *e, uint32_t peer, uint8_t kind, uint64_t wr_id,
                    const void *src, void *dst, uint64_t len, uint32_t rkey, uint64_t roffset)
{
    nw_pdc_t *p = peer_get(e, peer);
    if (!p)
        return NW_ENOPEER;
    if (p->failed)
        return p->fail_status;
    if (len > UINT32_MAX || (len > 0 && !src && !dst))
        return NW_EINVAL;
    if (p->mode == NW_MODE_UUD &&
        (kind == NW_WR_READ || nw_seg_count(len, e->max_payload) > NW_UUD_MAX_PKTS))
        return NW_EINVAL;
    if (e->wr_credits == 0)
        return NW_EAGAIN;
    nw_wr_t *w = nw_wr_alloc(e);
    if (!w)
        return NW_EAGAIN;
    e->wr_credits--;
    w->kind = kind;
    w->wr_id = wr_id;
    w->src = src;
    w->dst = dst;
    w->len = len;
    w->rkey = rkey;
    w->roffset = roffset;
    w->seg_max = nw_ec_seg_payload(e, p);
    w->pkts_total = nw_seg_count(kind == NW_WR_READ ? 0 : len, w->seg_max);
    w->seq = p->post_seq++;
    nw_wr_enqueue(e, p, w);
    return NW_OK;
}

int32_t nw_post_write(nw_engine_t *e, uint32_t peer, uint64_t wr_id, const void *local,
                      uint64_t len, uint32_t rkey, uint64_t roffset)
{
    if (len > 0 && !local)
        return NW_EINVAL;
    return post(e, peer, NW_WR_WRITE, wr_id, local, NULL, len, rkey, roffset);
}

int32_t nw_post_read(nw_engine_t *e, uint32_t peer, uint64_t wr_id, void *local, uint64_t len,
                     uint32_t rkey, uint64_t roffset)
{
    if (len > 0 && !local)
        return NW_EINVAL;
    return post(e, peer, NW_WR_READ, wr_id, NULL, local, len, rkey, roffset);
}

int32_t nw_post_send(nw_engine_t *e, uint32_t peer, uint64_t wr_id, const void *buf,
                     uint64_t len)
{
    if (len > 0 && !buf)
        return NW_EINVAL;
    return post(e, peer, NW_WR_SEND, wr_id, buf, NULL, len, 0, 0);
}

int32_t nw_post_recv(nw_engine_t *e, uint64_t wr_id, void *buf, uint64_t cap)
{
    if (cap > 0 && !buf)
        return NW_EINVAL;
    if (e->recv_credits == 0)
        return NW_EAGAIN;
    int32_t r = nw_rq_push(&e->rq, wr_id, buf, cap);
    if (r == NW_OK)
        e->recv_credits--;
    return r;
}

/* ---------------------------------------------------------- time */

static void min_deadline(uint64_t *d, uint64_t t)
{
    if (t && t < *d)
        *d = t;
}

uint64_t nw_next_deadline(const nw_engine_t *e)
{
    uint64_t d = UINT64_MAX;
    for (uint32_t i = 0; i < e->cfg.max_peers; i++) {
        const nw_pdc_t *p = &e->pdcs[i];
        if (!p->in_use)
            continue;
        min_deadline(&d, p->rto_deadline);
        min_deadline(&d, p->ack_deadline);
        min_deadline(&d, p->uud_deadline);
        min_deadline(&d, p->rack_deadline);
        min_deadline(&d, p->rsp_deadline);
        min_deadline(&d, p->rod_recheck_deadline);
        min_deadline(&d, nw_pdc_half_open_deadline(e, p));
        min_deadline(&d, nw_cc_deadline(e, p));
    }
    min_deadline(&d, nw_rccc_pacer_deadline(e));
    return d;
}

void nw_on_time(nw_engine_t *e, uint64_t now_ns)
{
    if (now_ns > e->now)
        e->now = now_ns;
    nw_pdc_expire_half_open(e, now_ns);
    nw_rccc_pacer_run(e, now_ns);
    for (uint32_t i = 0; i < e->cfg.max_peers; i++) {
        nw_pdc_t *p = &e->pdcs[i];
        if (!p->in_use)
            continue;
        if (p->ack_deadline && p->ack_deadline <= now_ns) {
            p->ack_deadline = 0;
            p->ack_now = 1;
        }
        if (p->rack_deadline && p->rack_deadline <= now_ns)
            nw_tx_detect_losses(e, p, now_ns);
        if (p->rto_deadline && p->rto_deadline <= now_ns)
            nw_tx_on_rto(e, p, now_ns);
        if (p->rsp_deadline && p->rsp_deadline <= now_ns)
            nw_tx_on_rsp_timeout(e, p, now_ns);
        if (p->rod_recheck_deadline && p->rod_recheck_deadline <= now_ns)
            nw_tx_on_rod_recheck(e, p, now_ns);
        if (p->uud_deadline && p->uud_deadline <= now_ns)
            nw_rxm_on_time(e, p, now_ns);
        nw_cc_on_time(e, p, now_ns);
        nw_pdc_activate(e, p);
    }
}

/* ---------------------------------------------------------- completions */

int32_t nw_poll_cq(nw_engine_t *e, nw_completion_t *out, uint32_t max)
{
    uint32_t n = nw_cq_pop(&e->cq, out, max);
    for (uint32_t i = 0; i < n; i++) {
        if (out[i].opcode == NW_OP_RECV)
            e->recv_credits++;
        else
            e->wr_credits++;
    }
    return (int32_t)n;
}

void nw_stats_get(const nw_engine_t *e, nw_stats_t *out)
{
    *out = e->st;
}

const char *nw_strerror(int32_t err)
{
    switch (err) {
    case NW_OK: return "success";
    case NW_EINVAL: return "invalid argument";
    case NW_ENOMEM: return "out of memory";
    case NW_EAGAIN: return "queue full: poll completions and retry";
    case NW_ENOPEER: return "unknown peer";
    case NW_ENOKEY: return "unknown memory key";
    case NW_ERANGE: return "offset or length outside the memory region";
    case NW_EACCES: return "memory region lacks the requested access";
    case NW_ETOOLONG: return "message longer than the receive buffer";
    case NW_ETIMEDOUT: return "peer unreachable: retransmission limit reached (is it running, "
                              "and is its address and port right?)";
    case NW_ELOST: return "unreliable message partly lost";
    case NW_EREMOTE_ACCESS: return "remote refused the memory access (bad key, range or rights)";
    case NW_ECLOSED: return "closed";
    case NW_EBUSY: return "memory region in use by pending operations";
    case NW_ETOOBIG: return "packet does not fit the buffer";
    case NW_ESYS: return "a system call failed";
    case NW_EPERM: return "operation not permitted (raw sockets need root or CAP_NET_RAW)";
    case NW_ECANCELED: return "canceled: the peer or endpoint was closed";
    case NW_EMTU: return "the peer drops our packets as larger than its MTU: give both "
                         "endpoints the same mtu";
    default: return "unknown error";
    }
}
