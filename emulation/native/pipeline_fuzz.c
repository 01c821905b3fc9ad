/* libFuzzer harness of a generated pipeline (emulation/native/fuzzing.py builds it).
 *
 * Linked with one program's generated C and nw_fuzz_configure(), the replay of
 * the control-plane calls a configuration made (table entries, defaults), so
 * inputs reach the actions and the deparser, not only the parser.
 *
 * Input: byte 0 = ingress port (low 4 bits) and whether egress sees queue
 * metadata (bit 7); the rest is the frame.  The frame is copied into a buffer
 * of exactly its length for the parser (AddressSanitizer catches any read past
 * the frame), then into a buffer of len + nw_pipeline_emit_max() for egress, as
 * the drivers give it.  Multicast packets take one egress pass on port 1.
 *
 * With NW_FUZZ_ECHO set in the environment, each output is written to stdout as
 * "out <port> <hex>" (or "drop"): a check that the replayed tables are there.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline_abi.h"

void nw_fuzz_configure(void *pipeline);

static void *g_pipeline;
static uint64_t g_now_ns;
static int g_echo;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    g_pipeline = nw_pipeline_new(0);   /* random() as SoftSwitch(seed=0) draws it */
    if (!g_pipeline)
        abort();
    nw_fuzz_configure(g_pipeline);
    g_echo = getenv("NW_FUZZ_ECHO") != NULL;
    if (g_echo)
        setvbuf(stdout, NULL, _IOLBF, 0);   /* no buffered output for a forked child to repeat */
    return 0;
}

static void *state_new(void) {
    size_t size = (nw_pipeline_state_size() + 15u) & ~(size_t)15u;
    void *state = aligned_alloc(16, size ? size : 16);
    if (!state)
        abort();
    return state;
}

static void egress_pass(nw_pkt_t *pkt, const uint8_t *frame, uint32_t len, int queued) {
    uint32_t cap = len + nw_pipeline_emit_max();
    uint8_t *buf = malloc(cap ? cap : 1);
    if (!buf)
        abort();
    memcpy(buf, frame, len);
    pkt->data = buf;
    pkt->len = len;
    pkt->cap = cap;
    nw_queue_meta_t queue = {g_now_ns / 1000u, len % 64u, 7u, len % 64u, 0u};
    int rc = nw_egress(g_pipeline, pkt, g_now_ns, queued ? &queue : NULL);
    if (rc == NW_OK && pkt->len > pkt->cap)
        abort();    /* the deparser claimed more bytes than the buffer holds */
    if (g_echo && rc == NW_OK && !(pkt->flags & NW_F_DROP)) {
        printf("out %u ", (unsigned)pkt->egress_port);
        for (uint32_t i = 0; i < pkt->len; i++)
            printf("%02x", buf[i]);
        printf("\n");
    } else if (g_echo) {
        printf("drop\n");
    }
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 65536)
        return 0;
    uint32_t len = (uint32_t)(size - 1);
    uint8_t *frame = malloc(len ? len : 1);
    if (!frame)
        abort();
    memcpy(frame, data + 1, len);
    void *state = state_new();
    nw_pkt_t pkt;
    memset(&pkt, 0, sizeof pkt);
    pkt.data = frame;
    pkt.len = len;
    pkt.cap = len;
    pkt.ingress_port = (uint16_t)(data[0] & 0x0Fu);
    pkt.instance_type = NW_INSTANCE_NORMAL;
    pkt.state = state;
    g_now_ns += 1000;
    int rc = nw_ingress(g_pipeline, &pkt, g_now_ns);
    if (rc == NW_OK && !(pkt.flags & NW_F_DROP)) {
        if (pkt.mcast_grp != 0) {
            pkt.egress_port = 1;
            pkt.egress_rid = 1;
            pkt.instance_type = NW_INSTANCE_REPLICATION;
        } else {
            pkt.egress_port = pkt.egress_spec;
            pkt.instance_type = NW_INSTANCE_NORMAL;
        }
        egress_pass(&pkt, frame, len, (data[0] & 0x80u) != 0);
    } else if (g_echo) {
        printf("drop\n");
    }
    free(state);
    free(frame);
    return 0;
}
