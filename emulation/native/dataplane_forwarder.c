/* The minimal forwarder (dataplane_forwarder.h). */
#include "dataplane_forwarder.h"

#include <stdlib.h>

struct nw_dp_forwarder {
    uint16_t out[512];
    nw_dp_pipeline_t ops;
};

static uint32_t forward(void *self, uint32_t in_port, const uint8_t *frame, uint32_t len)
{
    (void)frame;
    (void)len;
    const nw_dp_forwarder_t *f = self;
    return in_port < 512u ? f->out[in_port] : NW_DP_DROP_PORT;
}

nw_dp_forwarder_t *nw_dp_forwarder_new(void)
{
    nw_dp_forwarder_t *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    for (uint32_t i = 0; i < 512u; i++)
        f->out[i] = NW_DP_DROP_PORT;
    f->ops.name = "minimal forwarder";
    f->ops.self = f;
    f->ops.flags = NW_DP_PIPELINE_DIRECT;
    f->ops.direct = forward;
    return f;
}

void nw_dp_forwarder_free(nw_dp_forwarder_t *f)
{
    free(f);
}

int32_t nw_dp_forwarder_map(nw_dp_forwarder_t *f, uint32_t in_port, uint32_t out_port)
{
    if (in_port >= 512u || out_port > NW_DP_DROP_PORT)
        return -1;
    f->out[in_port] = (uint16_t)out_port;
    return 0;
}

const nw_dp_pipeline_t *nw_dp_forwarder_pipeline(nw_dp_forwarder_t *f)
{
    return &f->ops;
}
