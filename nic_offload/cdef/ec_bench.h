typedef struct {
    uint64_t tx_ns;
    uint64_t rx_ns;
    uint64_t payload_bytes;
    uint64_t parity_bytes;
    uint64_t recovered_pkts;
    uint64_t retransmits;
} nw_ec_bench_t;

int32_t nw_ec_bench_engine(uint32_t k, uint32_t m, uint32_t drop, uint32_t mtu, uint64_t bytes,
                           nw_ec_bench_t *out);
