uint16_t nw_csum16(const uint8_t *data, size_t len);
uint64_t nw_csum_add(uint64_t sum, const uint8_t *data, size_t len);
uint16_t nw_csum_fold(uint64_t sum);
