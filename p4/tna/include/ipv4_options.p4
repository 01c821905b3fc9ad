/*
 * IPv4 options for the Tofino programs (p4/tna/, p4/t2na/; needs headers.p4).
 *
 * netweft's v1model programs parse options as a varbit (include/parsers.p4);
 * on Tofino they are 0 to 10 fixed 32-bit words, so that the IPv4 checksum the
 * deparsers recompute (after a TTL, ECN or address change) covers them.  The
 * macros name the program's parser argument `pkt` and its headers `hdr`,
 * which must hold IPV4_OPTION_WORDS after `ipv4`; a parser that uses
 * IPV4_OPTION_STATES defines its own state parse_ipv4_payload.
 */
#ifndef NETWEFT_TOFINO_IPV4_OPTIONS_P4
#define NETWEFT_TOFINO_IPV4_OPTIONS_P4

/* One 32-bit word of IPv4 options (ihl - 5 of them follow the header). */
header ipv4_option_word_h {
    bit<32> word;
}

#define IPV4_OPTION_WORDS \
    ipv4_option_word_h ipv4_opt0; ipv4_option_word_h ipv4_opt1; \
    ipv4_option_word_h ipv4_opt2; ipv4_option_word_h ipv4_opt3; \
    ipv4_option_word_h ipv4_opt4; ipv4_option_word_h ipv4_opt5; \
    ipv4_option_word_h ipv4_opt6; ipv4_option_word_h ipv4_opt7; \
    ipv4_option_word_h ipv4_opt8; ipv4_option_word_h ipv4_opt9;

/* Parser states: IPv4 option word n, then the next one or the payload. */
#define IPV4_OPTION_STATE(n, next) \
    state parse_ipv4_opt##n { \
        pkt.extract(hdr.ipv4_opt##n); \
        transition select(hdr.ipv4.ihl) { \
            (5 + n + 1): parse_ipv4_payload; \
            default: parse_ipv4_opt##next; \
        } \
    }
#define IPV4_OPTION_STATES \
    IPV4_OPTION_STATE(0, 1) IPV4_OPTION_STATE(1, 2) IPV4_OPTION_STATE(2, 3) \
    IPV4_OPTION_STATE(3, 4) IPV4_OPTION_STATE(4, 5) IPV4_OPTION_STATE(5, 6) \
    IPV4_OPTION_STATE(6, 7) IPV4_OPTION_STATE(7, 8) IPV4_OPTION_STATE(8, 9) \
    state parse_ipv4_opt9 { \
        pkt.extract(hdr.ipv4_opt9); \
        transition parse_ipv4_payload; \
    }

/* The IPv4 header checksum over the header and its option words. */
#define IPV4_CHECKSUM_FIELDS { \
    hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn, \
    hdr.ipv4.totalLen, hdr.ipv4.identification, hdr.ipv4.flags, \
    hdr.ipv4.fragOffset, hdr.ipv4.ttl, hdr.ipv4.protocol, \
    hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, \
    hdr.ipv4_opt0.word, hdr.ipv4_opt1.word, hdr.ipv4_opt2.word, hdr.ipv4_opt3.word, \
    hdr.ipv4_opt4.word, hdr.ipv4_opt5.word, hdr.ipv4_opt6.word, hdr.ipv4_opt7.word, \
    hdr.ipv4_opt8.word, hdr.ipv4_opt9.word }

#define EMIT_IPV4_OPTIONS \
    pkt.emit(hdr.ipv4_opt0); pkt.emit(hdr.ipv4_opt1); pkt.emit(hdr.ipv4_opt2); \
    pkt.emit(hdr.ipv4_opt3); pkt.emit(hdr.ipv4_opt4); pkt.emit(hdr.ipv4_opt5); \
    pkt.emit(hdr.ipv4_opt6); pkt.emit(hdr.ipv4_opt7); pkt.emit(hdr.ipv4_opt8); \
    pkt.emit(hdr.ipv4_opt9);

#endif  /* NETWEFT_TOFINO_IPV4_OPTIONS_P4 */
