uint16_t nw_csum16(const uint8_t *data, size_t len);
