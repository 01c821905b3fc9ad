/*
 * netweft's declarations of the P4-16 core library (P4-16 language
 * specification, appendix "core library"). Written for netweft's embedded
 * switch; the names and signatures follow the public specification so that
 * programs which `#include <core.p4>` compile unchanged.
 */
#ifndef _NETWEFT_CORE_P4_
#define _NETWEFT_CORE_P4_
/* p4c's own include guard: programs written for p4c test it with #ifdef. */
#define _CORE_P4_

/* Standard error codes; their order gives the numeric codes (NoError = 0). */
error {
    NoError,                /* no error */
    PacketTooShort,         /* not enough bits in the packet for extract */
    NoMatch,                /* select expression matched no label */
    StackOutOfBounds,       /* reference past the end of a header stack */
    HeaderTooShort,         /* extract of a varbit field longer than the header allows */
    ParserTimeout,          /* the parser ran out of time */
    ParserInvalidArgument   /* a parser operation got an invalid argument */
}

/* The packet as the parser sees it. */
extern packet_in {
    /* Read a fixed-size header and advance the cursor. */
    void extract<T>(out T hdr);
    /* Read a header with one varbit field of the given size in bits. */
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    /* Read bits without advancing the cursor. */
    T lookahead<T>();
    /* Skip bits. */
    void advance(in bit<32> sizeInBits);
    /* Total packet length in bytes (may not be known by every target). */
    bit<32> length();
}

/* The packet as the deparser builds it. */
extern packet_out {
    /* Append a header if it is valid (structs/stacks: each valid header in order). */
    void emit<T>(in T hdr);
}

/* Reject the packet with `toSignal` when `check` is false (parsers only). */
extern void verify(in bool check, in error toSignal);

/* Compile-time check (P4-16 1.2.4): compilation fails, with `message` if given,
 * when `check` is false; the call itself is the constant true. */
extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);

/* The action that does nothing: the usual default action. */
@noWarn("unused")
action NoAction() {}

/* Match kinds every architecture supports. */
match_kind {
    exact,
    ternary,
    lpm
}

#endif /* _NETWEFT_CORE_P4_ */
