/* Registers whose cells the native back end interleaves (test_interleaved_registers.py):
 * a, b, c (32 bits) and d (16 bits) have 16 cells each in one control and share a
 * block; e (8 cells) and f (in the egress) have blocks of their own. Op 1 adds the
 * frame's value into a[index] and stores value + 1, + 2, + 3 into b, c, d[index], and
 * value + 4 into e and f; op 2 reads every register's cell `index` into the frame. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header regs_t {
    bit<8> op; bit<8> index; bit<32> value;
    bit<32> a; bit<32> b; bit<32> c; bit<16> d; bit<32> e; bit<32> f;
}
struct headers { ethernet_t ethernet; regs_t regs; }
struct metadata { }

parser RParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    state start { packet.extract(hdr.ethernet); packet.extract(hdr.regs); transition accept; }
}
control RVerify(inout headers hdr, inout metadata meta) { apply { } }
control RIngress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    register<bit<32>>(16) a;
    register<bit<32>>(16) b;
    register<bit<32>>(16) c;
    register<bit<16>>(16) d;
    register<bit<32>>(8) e;
    apply {
        standard_metadata.egress_spec = 1;
        bit<32> i = (bit<32>)hdr.regs.index;
        if (hdr.regs.op == 1) {
            bit<32> acc;
            a.read(acc, i);
            a.write(i, acc + hdr.regs.value);
            b.write(i, hdr.regs.value + 1);
            c.write(i, hdr.regs.value + 2);
            d.write(i, (bit<16>)(hdr.regs.value + 3));
            e.write(i, hdr.regs.value + 4);
        } else {
            a.read(hdr.regs.a, i);
            b.read(hdr.regs.b, i);
            c.read(hdr.regs.c, i);
            d.read(hdr.regs.d, i);
            e.read(hdr.regs.e, i);
        }
    }
}
control REgress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    register<bit<32>>(16) f;
    apply {
        bit<32> i = (bit<32>)hdr.regs.index;
        if (hdr.regs.op == 1) {
            f.write(i, hdr.regs.value + 4);
        } else {
            f.read(hdr.regs.f, i);
        }
    }
}
control RCompute(inout headers hdr, inout metadata meta) { apply { } }
control RDeparser(packet_out packet, in headers hdr) {
    apply { packet.emit(hdr.ethernet); packet.emit(hdr.regs); }
}
V1Switch(RParser(), RVerify(), RIngress(), REgress(), RCompute(), RDeparser()) main;
