/* The one wire model: what one direction of a link does to the frames it carries.
 *
 * The simulator (transport/sim/wire.py), the emulation's Python switch
 * (emulation/links/link_model.py) and the native switch all run this code, so a
 * parameter means the same thing everywhere and the same seed gives the same
 * outcome for the same frames. Sans-IO: every call takes the current time in
 * nanoseconds and returns when the frame arrives (or why it is dropped); the
 * caller owns the clock, the frames and the timers.
 *
 * Meaning of each parameter (after Linux netem/tbf; docs/links.md):
 *
 *   rate_bps   the transmitter: frames are serialized one after another at this
 *              rate (frame bytes as given, no preamble or inter-frame gap); a
 *              frame's serialization takes round(len * 8e9 / rate_bps) ns, at
 *              least 1. A frame that finds the transmitter busy waits behind
 *              the frames before it. 0: no transmitter, frames leave at once.
 *   limit      frames that may be waiting for or on the transmitter when a new
 *              one arrives (netem's limit): the one more is dropped
 *              (NW_LINK_DROP_LIMIT) and takes no random draw. 0: no limit.
 *   delay_ns   propagation: the frame's last bit arrives delay_ns after it left.
 *   jitter_ns  each frame's delay is delay_ns + u, u uniform on the integers
 *              [-jitter_ns, +jitter_ns], clamped so the frame never arrives
 *              before it left; frames keep their order (a frame never arrives
 *              before the one sent before it, as on one wire).
 *   loss       each frame is lost with this probability, independently
 *              (Bernoulli).
 *   gemodel    Gilbert-Elliott burst loss (netem's "loss gemodel p r 1-h 1-k"):
 *              per frame the chain first moves (good->bad with probability
 *              ge_p, bad->good with ge_r), then the frame is lost with
 *              ge_loss_bad in the bad state, ge_loss_good in the good one.
 *              Mean burst: 1/ge_r frames. Composed with loss: a frame is lost
 *              if either drops it (both are drawn for every frame);
 *              NW_LINK_DROP_LOSS if the Bernoulli draw dropped it, else
 *              NW_LINK_DROP_BURST.
 *   corrupt    with this probability one bit of the frame, uniform over its
 *              len * 8 bits, is flipped (bit 0 = the first byte's most
 *              significant bit). Lost frames are not corrupted.
 *
 * Randomness: four xoshiro256** generators, one per effect (loss, gemodel,
 * jitter, corrupt), their states filled in that order by the first sixteen
 * outputs of splitmix64 started at the 64-bit seed. Every enabled effect takes
 * the same draws for every frame that reaches the wire whatever the others do
 * (loss: 1; gemodel: 2; jitter: 1; corrupt: 1, plus 1 for the bit when it
 * corrupts), so enabling one effect does not change which frames another one
 * hits.
 */
#ifndef NW_WIRE_MODEL_H
#define NW_WIRE_MODEL_H

#include <stdint.h>

enum nw_link_verdict {
    NW_LINK_DELIVER = 0,    /* the frame arrives at arrive_ns */
    NW_LINK_DROP_LIMIT = 1, /* too many frames waiting for the transmitter */
    NW_LINK_DROP_LOSS = 2,  /* lost by the independent (Bernoulli) loss */
    NW_LINK_DROP_BURST = 3, /* lost by the Gilbert-Elliott chain */
};

#define NW_LINK_NO_BIT UINT64_MAX /* corrupt_bit when no bit is flipped */

typedef struct nw_link_config {
    uint64_t rate_bps;     /* 0: no transmitter */
    uint32_t limit;        /* waiting frames; 0: unlimited */
    uint32_t gemodel;      /* 1: the Gilbert-Elliott chain runs */
    uint64_t delay_ns;
    uint64_t jitter_ns;
    double loss;           /* probabilities, each in [0, 1] */
    double ge_p;
    double ge_r;
    double ge_loss_good;
    double ge_loss_bad;
    double corrupt;
} nw_link_config_t;

typedef struct nw_link_result {
    uint32_t verdict;      /* enum nw_link_verdict */
    uint64_t depart_ns;    /* the frame's last bit left the transmitter */
    uint64_t arrive_ns;    /* its last bit reached the far end (NW_LINK_DELIVER) */
    uint64_t corrupt_bit;  /* the bit to flip, or NW_LINK_NO_BIT */
} nw_link_result_t;

typedef struct nw_link_stats {
    uint64_t delivered;
    uint64_t dropped_limit;
    uint64_t lost;         /* by loss */
    uint64_t burst_lost;   /* by the gemodel */
    uint64_t corrupted;
} nw_link_stats_t;

typedef struct nw_link nw_link_t;

/* A direction with `cfg` and the random streams of `seed`; NULL if `cfg` is
 * invalid (a probability outside [0, 1] or NaN) or memory is short. */
nw_link_t *nw_link_new(const nw_link_config_t *cfg, uint64_t seed);
void nw_link_free(nw_link_t *link);

/* Hand a `len`-byte frame to the transmitter at `now_ns`: the transmitter, then
 * the wire. Fills `out`; returns out->verdict. */
uint32_t nw_link_send(nw_link_t *link, uint64_t now_ns, uint32_t len, nw_link_result_t *out);

/* The wire only: the frame's last bit left at `now_ns` (a caller that schedules
 * its own transmitter, e.g. a switch's egress port). Never NW_LINK_DROP_LIMIT. */
uint32_t nw_link_propagate(nw_link_t *link, uint64_t now_ns, uint32_t len,
                           nw_link_result_t *out);

/* Nanoseconds a transmitter of `rate_bps` needs for `len` bytes: round(len * 8e9 /
 * rate_bps), at least 1; 0 if rate_bps is 0. Every queue of the simulator serializes
 * with this rule too. */
uint64_t nw_link_serialization_ns(uint64_t rate_bps, uint32_t len);

/* Nanoseconds the transmitter needs for a `len`-byte frame (0 without a rate). */
uint64_t nw_link_transmit_ns(const nw_link_t *link, uint32_t len);

/* When the transmitter is free again (0 if it never sent). */
uint64_t nw_link_busy_until(const nw_link_t *link);

void nw_link_get_stats(const nw_link_t *link, nw_link_stats_t *out);

/* Flip bit `bit` of `frame` (bit 0 = the first byte's most significant bit);
 * 0 on success, -1 if the bit is outside the `len` bytes. */
int nw_link_flip_bit(uint8_t *frame, uint32_t len, uint64_t bit);

#endif
