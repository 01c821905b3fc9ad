/* Memory regions: registered buffers that peers reach by rkey.
 *
 * An rkey is (generation << 16) | (slot + 1), so a stale rkey of a
 * deregistered region never resolves to the slot's next tenant. */
#ifndef NETWEFT_MEMORY_REGION_H
#define NETWEFT_MEMORY_REGION_H

#include <stdint.h>

typedef struct {
    uint8_t *base;
    uint64_t len;
    uint32_t access;   /* NW_ACCESS_* */
    uint32_t refs;     /* in-flight read responses reading from it */
    uint16_t gen;
    uint8_t in_use;
} nw_mr_t;

typedef struct {
    nw_mr_t *slots;
    uint32_t cap;      /* <= 65535 */
} nw_mr_table_t;

int32_t nw_mr_table_init(nw_mr_table_t *t, uint32_t cap);
void nw_mr_table_destroy(nw_mr_table_t *t);
int32_t nw_mr_table_add(nw_mr_table_t *t, void *base, uint64_t len, uint32_t access,
                        uint32_t *rkey_out);
int32_t nw_mr_table_remove(nw_mr_table_t *t, uint32_t rkey);
/* The region named by rkey, or NULL. */
nw_mr_t *nw_mr_table_get(nw_mr_table_t *t, uint32_t rkey);
/* Checks that [off, off+len) lies in the region and that it grants `access`;
 * returns NW_OK and the address, or NW_ENOKEY / NW_ERANGE / NW_EACCES. */
int32_t nw_mr_table_resolve(nw_mr_table_t *t, uint32_t rkey, uint64_t off, uint64_t len,
                            uint32_t access, uint8_t **addr_out);

#endif
