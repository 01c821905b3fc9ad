/* Registers of 100 and 128 bits (test_wide_registers.py): a frame's op byte
 * stores its 16-byte value into cell `index`, or reads the cell into it; 100-bit
 * cells keep the low 100 bits. Op 3: the deprecated Checksum16 extern over the
 * value and the index, into `narrow`. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header wide_t { bit<8> op; bit<8> index; bit<128> value; bit<128> narrow; }
struct headers { ethernet_t ethernet; wide_t wide; }
struct metadata { }

parser WParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    state start { packet.extract(hdr.ethernet); packet.extract(hdr.wide); transition accept; }
}
control WVerify(inout headers hdr, inout metadata meta) { apply { } }
control WIngress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    register<bit<128>>(8) full;
    register<bit<100>>(8) part;
    Checksum16() ck16;
    apply {
        standard_metadata.egress_spec = 1;
        bit<32> i = (bit<32>)hdr.wide.index;
        if (hdr.wide.op == 1) {
            full.write(i, hdr.wide.value);
            part.write(i, hdr.wide.value[99:0]);
        } else if (hdr.wide.op == 3) {
            hdr.wide.narrow = (bit<128>)ck16.get({ hdr.wide.value, hdr.wide.index[4:0] })
                              + (bit<128>)ck16.get({ hdr.wide.index });
        } else {
            full.read(hdr.wide.value, i);
            bit<100> p;
            part.read(p, i);
            hdr.wide.narrow = (bit<128>)p + 1;
        }
    }
}
control WEgress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) { apply { } }
control WCompute(inout headers hdr, inout metadata meta) { apply { } }
control WDeparser(packet_out packet, in headers hdr) {
    apply { packet.emit(hdr.ethernet); packet.emit(hdr.wide); }
}
V1Switch(WParser(), WVerify(), WIngress(), WEgress(), WCompute(), WDeparser()) main;
