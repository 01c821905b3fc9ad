// netweft-only leniency (p4c-bm2-ss refuses it; see docs/bmv2-differences.md): table applied more than once
// netweft-only leniency (p4c-bm2-ss refuses it; see docs/bmv2-differences.md): priority in const entries
/* A program that touches every language feature the front end supports. */
#include <core.p4>
#include <v1model.p4>

#define PORTS 8
#define TABLE_SIZE(n) ((n) * 2)
#define STRINGIFY(x) #x
#if defined(PORTS) && PORTS > 4
#define WIDE 1
#elif PORTS > 2
#define WIDE 2
#else
#define WIDE 3
#endif
#ifndef WIDE
#error "WIDE must be defined"
#endif
#undef STRINGIFY

const bit<16> ETH_IPV4 = 16w0x0800;
const bit<16> ETH_VLAN = 0x8100;
const bit<16> ETH_OPT  = 0x88B5;
const int     SHIFT    = 3;
const bit<8>  MASKED   = (bit<8>)(0xF0 >> SHIFT);
const bool    DEBUG    = WIDE == 1;

typedef bit<48> mac_t;
type bit<32> ipv4_addr_t;

enum Color { RED, GREEN, BLUE }
enum bit<8> Proto { TCP = 6, UDP = 17, ICMP = 1 }

error { BadOption, Unused }
match_kind { fancy }

header ethernet_t { mac_t dst; mac_t src; bit<16> etherType; }
header vlan_t { bit<3> pcp; bit<1> cfi; bit<12> vid; bit<16> etherType; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> totalLen; bit<16> id;
    bit<3> flags; bit<13> frag; bit<8> ttl; Proto protocol; bit<16> csum;
    bit<32> src; bit<32> dst;
}
header opt_t { bit<8> len; varbit<320> data; }
header udp_t { bit<16> sport; bit<16> dport; bit<16> len; bit<16> csum; }
header tcp_t { bit<16> sport; bit<16> dport; bit<32> seq; bit<32> ack; bit<64> rest; }
header_union l4_t { udp_t udp; tcp_t tcp; }
header signed_t { int<8> a; int<8> b; bool flag; bit<7> pad; }

struct digest_t { mac_t src; bit<9> port; }
struct meta_t {
    @field_list(1) bit<32> hashval;
    bit<16> l4_sport;
    @field_list(1, 2) bit<8> counter_idx;
    Color color;
    bit<2> meter_color;
    int<16> sval;
    bool matched;
    bit<32> reg;
    tuple<bit<8>, bool> pair;
}
struct headers_t {
    ethernet_t ethernet;
    vlan_t[2] vlans;
    ipv4_t ipv4;
    opt_t opt;
    l4_t l4;
    signed_t sig;
}

bit<8> max8(in bit<8> a, in bit<8> b) {
    return a > b ? a : b;
}

T pick<T>(in bool c, in T x, in T y) {
    if (c) { return x; }
    return y;
}

action top_level_set(inout bit<8> v, bit<8> value) { v = value; }

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t standard_metadata) {
    value_set<bit<16>>(4) opt_types;
    bit<8> optlen;

    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETH_VLAN &&& 0xEFFF: parse_vlan;
            ETH_IPV4: parse_ipv4;
            opt_types: parse_opt;
            0x9000 .. 0x90FF: reject;
            default: accept;
        }
    }
    state parse_vlan {
        pkt.extract(hdr.vlans.next);
        transition select(hdr.vlans.last.etherType, hdr.vlans.lastIndex) {
            (ETH_VLAN, 0): parse_vlan;
            (ETH_IPV4, _): parse_ipv4;
            default: accept;
        }
    }
    state parse_opt {
        optlen = pkt.lookahead<bit<8>>();
        verify(optlen <= 40, error.BadOption);
        pkt.extract(hdr.opt, (bit<32>)optlen * 8);
        transition accept;
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            Proto.UDP: parse_udp;
            Proto.TCP: parse_tcp;
            default: skip;
        }
    }
    state skip {
        pkt.advance(32);
        transition accept;
    }
    state parse_udp { pkt.extract(hdr.l4.udp); transition accept; }
    state parse_tcp { pkt.extract(hdr.l4.tcp); transition accept; }
}

control VerifyImpl(inout headers_t hdr, inout meta_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos, hdr.ipv4.totalLen, hdr.ipv4.id,
              hdr.ipv4.flags, hdr.ipv4.frag, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.src, hdr.ipv4.dst },
            hdr.ipv4.csum, HashAlgorithm.csum16);
    }
}

control Acl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm)
           (bit<32> acl_size, bool strict) {
    direct_counter(CounterType.packets) acl_hits;
    action deny() { mark_to_drop(sm); }
    action allow() { acl_hits.count(); }
    @name("acl_table")
    table t {
        key = {
            hdr.ipv4.src: ternary @name("src");
            hdr.ipv4.dst: ternary;
            meta.l4_sport: range;
            hdr.ipv4.protocol: optional;
        }
        actions = { allow; deny; }
        counters = acl_hits;
        size = acl_size;
        default_action = allow();
        const entries = {
            priority = 100: (0x0A000000 &&& 0xFF000000, _, 0 .. 1023, Proto.TCP) : deny();
            (_, 32w0x0A000001, _, _) : allow();
        }
    }
    apply {
        if (strict) {
            t.apply();
        }
    }
}

control IngressImpl(inout headers_t hdr, inout meta_t meta,
                    inout standard_metadata_t standard_metadata) {
    register<bit<32>>(PORTS) port_bytes;
    counter(TABLE_SIZE(4), CounterType.packets_and_bytes) port_counter;
    meter(32w16, MeterType.bytes) port_meter;
    direct_meter<bit<2>>(MeterType.packets) flow_meter;
    action_profile(128) ap;
    action_selector(HashAlgorithm.crc32, 32w64, 32w14) as;
    Acl(1024, true) acl;
    @name("backup_acl") Acl(16, false) acl2;
    bit<32> tmp = 0;

    action drop() { mark_to_drop(standard_metadata); exit; }
    action fwd(bit<9> port, mac_t dmac) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.dst = dmac;
        flow_meter.read(meta.meter_color);
    }
    action set_mcast(bit<16> grp) { standard_metadata.mcast_grp = grp; }
    action set_color(Color c) { meta.color = c; }
    @name(".global_nop") action nop() { }

    table l2 {
        key = { hdr.ethernet.dst: exact; hdr.vlans[0].vid: exact; }
        actions = { fwd; set_mcast; @defaultonly drop; nop; }
        const default_action = drop();
        meters = flow_meter;
        size = 64;
    }
    table routes {
        key = { hdr.ipv4.dst: lpm; }
        actions = { fwd; drop; }
        implementation = as;
    }
    table ecmp_members {
        key = { meta.hashval: exact; meta.l4_sport: selector; }
        actions = { fwd; }
        implementation = ap;
    }
    table colors {
        key = { meta.color: exact; hdr.ipv4.isValid(): exact; }
        actions = { set_color; NoAction; }
        const entries = {
            (Color.RED, true): set_color(Color.GREEN);
            (Color.GREEN, false): set_color(Color.BLUE);
        }
    }

    apply {
        bit<8> a = 8w200;
        bit<8> b = 100;
        int<8> s = -8s5;
        bit<16> wide;
        bool flag;
        tuple<bit<8>, bool> pr = { 8w1, true };

        // arithmetic and width rules
        a = a + b;                    // wraps
        a = a |+| b;                  // saturates
        b = b |-| 8w250;              // saturates at zero
        s = s - 127;
        s = s >> 1;                   // arithmetic shift
        wide = a ++ b;
        wide = wide << 3;
        b = wide[15:8];
        a = (bit<8>) s;
        a = ~a ^ MASKED & (a | 1);
        a = a * 3 / 2 % 7;
        flag = a == b || a != b && !(a < b) && a <= b && a > b && a >= b;
        a = flag ? max8(a, b) : pick<bit<8>>(flag, a, b);
        meta.sval = (int<16>) s;
        meta.pair = pr;
        meta.matched = pr[1];
        tmp = (bit<32>) hdr.ipv4.protocol;

        hash(meta.hashval, HashAlgorithm.crc16, 32w0,
             { hdr.ipv4.src, hdr.ipv4.dst, hdr.ipv4.protocol }, 32w1 << 16);
        random(meta.counter_idx, 8w0, 8w7);
        port_bytes.read(meta.reg, (bit<32>) standard_metadata.ingress_port);
        port_bytes.write((bit<32>) standard_metadata.ingress_port,
                         meta.reg + standard_metadata.packet_length);
        port_counter.count((bit<32>) meta.counter_idx);
        port_meter.execute_meter((bit<32>) meta.counter_idx, meta.meter_color);
        top_level_set(a, 8w5);

        switch (l2.apply().action_run) {
            fwd: { routes.apply(); }
            set_mcast:
            nop: { }
            default: { ecmp_members.apply(); }
        }
        if (!routes.apply().hit) {
            colors.apply();
        } else if (colors.apply().miss) {
            return;
        }
        switch (hdr.ipv4.protocol) {
            Proto.TCP: { meta.l4_sport = hdr.l4.tcp.sport; }
            Proto.UDP: { meta.l4_sport = hdr.l4.udp.sport; }
        }
        acl.apply(hdr, meta, standard_metadata);
        acl2.apply(hdr, meta, standard_metadata);

        if (hdr.vlans[1].isValid()) {
            hdr.vlans.pop_front(1);
        } else {
            hdr.vlans.push_front(1);
            hdr.vlans[0].setValid();
            hdr.vlans[0] = { 3w0, 1w0, 12w10, ETH_IPV4 };
        }
        if (hdr.l4.udp.isValid() || hdr.l4.isValid()) {
            hdr.sig.setValid();
            hdr.sig = { a = -1, b = 8s3, flag = DEBUG, pad = 0 };
        }
        digest<digest_t>(1, { hdr.ethernet.src, standard_metadata.ingress_port });
        clone(CloneType.I2E, 32w100);
        clone_preserving_field_list(CloneType.I2E, 5, 1);
        resubmit_preserving_field_list(1);
        truncate(64);
        assert(standard_metadata.egress_spec != 511 || true);
        assume(tmp >= 0);
        log_msg("ingress port {} color {}", { standard_metadata.ingress_port, meta.color });
        log_msg("done");
    }
}

control EgressImpl(inout headers_t hdr, inout meta_t meta,
                   inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.instance_type == 1) {
            recirculate_preserving_field_list(2);
        }
        if (standard_metadata.egress_rid != 0) {
            hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        }
    }
}

control ComputeImpl(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos, hdr.ipv4.totalLen, hdr.ipv4.id,
              hdr.ipv4.flags, hdr.ipv4.frag, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.src, hdr.ipv4.dst },
            hdr.ipv4.csum, HashAlgorithm.csum16);
        update_checksum_with_payload(hdr.l4.udp.isValid(),
            { hdr.ipv4.src, hdr.ipv4.dst, 8w0, hdr.ipv4.protocol, hdr.l4.udp.len,
              hdr.l4.udp.sport, hdr.l4.udp.dport, hdr.l4.udp.len },
            hdr.l4.udp.csum, HashAlgorithm.csum16);
    }
}

control DeparserImpl(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.vlans);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.opt);
        pkt.emit(hdr.l4);
        pkt.emit(hdr.sig);
    }
}

V1Switch(ParserImpl(), VerifyImpl(), IngressImpl(), EgressImpl(), ComputeImpl(),
         DeparserImpl()) main;
