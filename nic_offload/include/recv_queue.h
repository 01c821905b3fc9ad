/* Shared receive queue: posted receive buffers, matched FIFO to incoming sends. */
#ifndef NETWEFT_RECV_QUEUE_H
#define NETWEFT_RECV_QUEUE_H

#include <stdint.h>

typedef struct {
    uint64_t wr_id;
    uint8_t *buf;
    uint64_t cap;
} nw_recv_buf_t;

typedef struct {
    nw_recv_buf_t *ring;
    uint32_t cap, head, count;
} nw_recv_queue_t;

int32_t nw_rq_init(nw_recv_queue_t *q, uint32_t cap);
void nw_rq_destroy(nw_recv_queue_t *q);
int32_t nw_rq_push(nw_recv_queue_t *q, uint64_t wr_id, void *buf, uint64_t cap);
/* 1 and the oldest buffer, or 0 when none is posted. */
int32_t nw_rq_pop(nw_recv_queue_t *q, nw_recv_buf_t *out);

#endif
