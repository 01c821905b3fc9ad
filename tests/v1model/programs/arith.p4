/* Arithmetic and width rules at run time: operands come from the packet,
 * ingress writes every result into the result header. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header ops_t { bit<8> a; bit<8> b; int<8> sa; int<8> sb; bit<8> sh; }
header res_t {
    bit<8> add; bit<8> sub; bit<8> mul; bit<8> sat_add; bit<8> sat_sub;
    bit<8> shl; bit<8> shr; bit<8> band; bit<8> bor; bit<8> bxor; bit<8> bnot; bit<8> neg;
    bit<16> cat; bit<4> hi; bit<4> lo;
    int<8> sadd; int<8> ssub; int<8> smul; int<8> ssat_add; int<8> ssat_sub; int<8> sshr;
    int<8> sshl; int<8> sneg;
    bit<8> flags;        /* a<b, a>=b, sa<sb, sa>=sb, a==b, sa!=sb, (a>b)&&(sa<0), !(a<b)||sb>0 */
    int<16> widened;     /* (int<16>) sa */
    bit<16> zext;        /* (bit<16>) a */
    bit<8>  mux;         /* a > b ? a : b */
    bit<8>  slice_set;   /* a with bits [5:2] replaced by b[3:0] */
}
struct headers_t { ethernet_t eth; ops_t ops; res_t res; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta,
         inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.ops); transition accept; }
}
control V(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bit<8> a = hdr.ops.a;
        bit<8> b = hdr.ops.b;
        int<8> sa = hdr.ops.sa;
        int<8> sb = hdr.ops.sb;
        hdr.res.setValid();
        hdr.res.add = a + b;
        hdr.res.sub = a - b;
        hdr.res.mul = a * b;
        hdr.res.sat_add = a |+| b;
        hdr.res.sat_sub = a |-| b;
        hdr.res.shl = a << hdr.ops.sh;
        hdr.res.shr = a >> hdr.ops.sh;
        hdr.res.band = a & b;
        hdr.res.bor = a | b;
        hdr.res.bxor = a ^ b;
        hdr.res.bnot = ~a;
        hdr.res.neg = -a;
        hdr.res.cat = a ++ b;
        hdr.res.hi = a[7:4];
        hdr.res.lo = a[3:0];
        hdr.res.sadd = sa + sb;
        hdr.res.ssub = sa - sb;
        hdr.res.smul = sa * sb;
        hdr.res.ssat_add = sa |+| sb;
        hdr.res.ssat_sub = sa |-| sb;
        hdr.res.sshr = sa >> hdr.ops.sh;
        hdr.res.sshl = sa << hdr.ops.sh;
        hdr.res.sneg = -sa;
        bit<8> f = 0;
        if (a < b) { f = f | 8w1; }
        if (a >= b) { f = f | 8w2; }
        if (sa < sb) { f = f | 8w4; }
        if (sa >= sb) { f = f | 8w8; }
        if (a == b) { f = f | 8w16; }
        if (sa != sb) { f = f | 8w32; }
        if (a > b && sa < 0) { f = f | 8w64; }
        if (!(a < b) || sb > 0) { f = f | 8w128; }
        hdr.res.flags = f;
        hdr.res.widened = (int<16>) sa;
        hdr.res.zext = (bit<16>) a;
        hdr.res.mux = a > b ? a : b;
        bit<8> s = a;
        s[5:2] = b[3:0];
        hdr.res.slice_set = s;
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.ops); pkt.emit(hdr.res); }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
