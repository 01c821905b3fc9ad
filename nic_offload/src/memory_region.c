/* Memory region table: registration, rkey lookup and bounds-checked resolution. */
#include "memory_region.h"

#include <stdlib.h>

#include "engine.h"

int32_t nw_mr_table_init(nw_mr_table_t *t, uint32_t cap)
{
    if (cap == 0 || cap > 65535)
        return NW_EINVAL;
    t->slots = calloc(cap, sizeof(*t->slots));
    t->cap = cap;
    return t->slots ? NW_OK : NW_ENOMEM;
}

void nw_mr_table_destroy(nw_mr_table_t *t)
{
    free(t->slots);
    t->slots = NULL;
    t->cap = 0;
}

int32_t nw_mr_table_add(nw_mr_table_t *t, void *base, uint64_t len, uint32_t access,
                        uint32_t *rkey_out)
{
    if ((base == NULL && len > 0) || access == 0 || (access & ~0x7u))
        return NW_EINVAL;
    if (base != NULL && (uint64_t)(uintptr_t)base + len < (uint64_t)(uintptr_t)base)
        return NW_EINVAL;
    for (uint32_t i = 0; i < t->cap; i++) {
        nw_mr_t *mr = &t->slots[i];
        if (mr->in_use)
            continue;
        mr->base = base;
        mr->len = len;
        mr->access = access;
        mr->refs = 0;
        mr->gen = (uint16_t)(mr->gen + 1);
        if (mr->gen == 0)
            mr->gen = 1;
        mr->in_use = 1;
        *rkey_out = ((uint32_t)mr->gen << 16) | (i + 1);
        return NW_OK;
    }
    return NW_EAGAIN;
}

nw_mr_t *nw_mr_table_get(nw_mr_table_t *t, uint32_t rkey)
{
    uint32_t idx = rkey & 0xffffu;
    if (idx == 0 || idx > t->cap)
        return NULL;
    nw_mr_t *mr = &t->slots[idx - 1];
    if (!mr->in_use || mr->gen != (rkey >> 16))
        return NULL;
    return mr;
}

int32_t nw_mr_table_remove(nw_mr_table_t *t, uint32_t rkey)
{
    nw_mr_t *mr = nw_mr_table_get(t, rkey);
    if (!mr)
        return NW_ENOKEY;
    if (mr->refs)
        return NW_EBUSY;
    mr->in_use = 0;
    mr->base = NULL;
    mr->len = 0;
    return NW_OK;
}

int32_t nw_mr_table_resolve(nw_mr_table_t *t, uint32_t rkey, uint64_t off, uint64_t len,
                            uint32_t access, uint8_t **addr_out)
{
    nw_mr_t *mr = nw_mr_table_get(t, rkey);
    if (!mr)
        return NW_ENOKEY;
    if ((mr->access & access) != access)
        return NW_EACCES;
    if (off > mr->len || len > mr->len - off)
        return NW_ERANGE;
    *addr_out = mr->base + off;
    return NW_OK;
}
