/* The tcx ingress program that keeps tx=packet's datagrams out of the kernel
 * stack (tcx_divert.h). */
#define _GNU_SOURCE
#include "tcx_divert.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine.h"

#ifndef BPF_JMP32
#define BPF_JMP32 0x06
#endif
#define TCX_INGRESS_ATTACH 46 /* BPF_TCX_INGRESS: newer than Debian 12's uapi headers */
#define TCX_NEXT (-1)         /* let the next program, then the stack, have it */
#define TC_ACT_SHOT 2

#define INSN(c, d, s, o, i) ((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), \
                                               .off = (o), .imm = (i)})
#define LDX(size, d, s, o) INSN(BPF_LDX | BPF_MEM | (size), d, s, o, 0)
#define MOV64_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV64_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD64_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define AND32_IMM(d, i) INSN(BPF_ALU | BPF_AND | BPF_K, d, 0, 0, i)
#define JGT_REG(d, s, o) INSN(BPF_JMP | BPF_JGT | BPF_X, d, s, o, 0)
#define JNE32_IMM(d, i, o) INSN(BPF_JMP32 | BPF_JNE | BPF_K, d, 0, o, i)
#define JGT32_IMM(d, i, o) INSN(BPF_JMP32 | BPF_JGT | BPF_K, d, 0, o, i)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* Loads of packet bytes are raw memory: compare them with values in network
 * order as this machine reads them (htons/htonl). */
#define PASS 22 /* index of the "pass" exit */
#define TO_PASS(i) ((int16_t)(PASS - (i) - 1))

static int32_t load_program(uint32_t ip, uint16_t port, uint32_t max_frame)
{
    struct bpf_insn prog[] = {
        /* 0 */ LDX(BPF_W, 2, 1, offsetof(struct __sk_buff, data)),
        /* 1 */ LDX(BPF_W, 3, 1, offsetof(struct __sk_buff, data_end)),
        /* 2 */ LDX(BPF_W, 4, 1, offsetof(struct __sk_buff, len)),
        /* 3 */ JGT32_IMM(4, (int32_t)max_frame, TO_PASS(3)),
        /* 4 */ MOV64_REG(4, 2),
        /* 5 */ ADD64_IMM(4, 42), /* Ethernet + IPv4 without options + UDP */
        /* 6 */ JGT_REG(4, 3, TO_PASS(6)),
        /* 7 */ LDX(BPF_H, 5, 2, 12),
        /* 8 */ JNE32_IMM(5, htons(0x0800), TO_PASS(8)),
        /* 9 */ LDX(BPF_B, 5, 2, 14),
        /* 10 */ JNE32_IMM(5, 0x45, TO_PASS(10)),
        /* 11 */ LDX(BPF_B, 5, 2, 23),
        /* 12 */ JNE32_IMM(5, 17, TO_PASS(12)),
        /* 13 */ LDX(BPF_H, 5, 2, 20),
        /* 14 */ AND32_IMM(5, htons(0x3fff)), /* MF and fragment offset */
        /* 15 */ JNE32_IMM(5, 0, TO_PASS(15)),
        /* 16 */ LDX(BPF_W, 5, 2, 30),
        /* 17 */ JNE32_IMM(5, (int32_t)htonl(ip), TO_PASS(17)),
        /* 18 */ LDX(BPF_H, 5, 2, 36),
        /* 19 */ JNE32_IMM(5, htons(port), TO_PASS(19)),
        /* 20 */ MOV64_IMM(0, TC_ACT_SHOT),
        /* 21 */ EXIT(),
        /* 22 */ MOV64_IMM(0, TCX_NEXT),
        /* 23 */ EXIT(),
    };
    static const char license[] = "Dual BSD/GPL";
    union bpf_attr a;
    memset(&a, 0, sizeof(a));
    a.prog_type = BPF_PROG_TYPE_SCHED_CLS;
    a.insn_cnt = (uint32_t)(sizeof(prog) / sizeof(prog[0]));
    a.insns = (uint64_t)(uintptr_t)prog;
    a.license = (uint64_t)(uintptr_t)license;
    memcpy(a.prog_name, "nw_tcx_divert", sizeof("nw_tcx_divert"));
    return (int32_t)syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
}

static int32_t error_code(void)
{
    return errno == EPERM || errno == EACCES ? NW_EPERM : NW_ESYS;
}

int32_t nw_tcx_divert_attach(uint32_t ifindex, uint32_t local_ip, uint16_t local_port,
                             uint32_t max_frame)
{
    int32_t prog = load_program(local_ip, local_port, max_frame);
    if (prog < 0)
        return error_code();
    union bpf_attr a;
    memset(&a, 0, sizeof(a));
    a.link_create.prog_fd = (uint32_t)prog;
    a.link_create.target_fd = ifindex; /* target_ifindex in newer headers */
    a.link_create.attach_type = TCX_INGRESS_ATTACH;
    int32_t link = (int32_t)syscall(SYS_bpf, BPF_LINK_CREATE, &a, sizeof(a));
    int saved = errno;
    close(prog); /* the link holds the program */
    errno = saved;
    return link < 0 ? error_code() : link;
}
