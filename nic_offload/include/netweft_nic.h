/* netweft NIC engine: the umbrella header that the cffi module includes.
 * Each concept has its own header; add yours here. */
#ifndef NETWEFT_NIC_H
#define NETWEFT_NIC_H

#include "checksum.h"
#include "uet_wire.h"
#include "udp_frame.h"
#include "neighbor_cache.h"
#include "engine.h"
#include "io_driver.h"
#include "ec_bench.h"
#include "wire_model.h"
#include "aggregation_quantization.h"
#include "aggregation_worker.h"
#include "aggregation_socket.h"
/* ISA-L itself, for `netweft bench ec`'s raw figures (cdef/isal.h) */
#include <isa-l/erasure_code.h>

#endif
