/* Named arguments everywhere, an explicitly specialised package, a struct of
 * bit fields inside a header, and the deprecated zero-argument mark_to_drop. */
#include <v1model.p4>

struct flags_t { bit<1> urgent; bit<7> level; }

header tag_t {
    bit<8>  kind;
    flags_t flags;
    bit<16> next;
}

struct hdrs_t { tag_t tag; }
struct meta_t { bit<8> level; }

parser TagParser(packet_in packet, out hdrs_t hdr, inout meta_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr = hdr.tag);
        transition select(hdr.tag.flags.urgent) {
            1w1: accept;
            default: reject;
        }
    }
}

control TagIngress(inout hdrs_t hdr, inout meta_t meta,
                   inout standard_metadata_t standard_metadata) {
    action to_port(bit<9> port) { standard_metadata.egress_spec = port; }
    action discard() { mark_to_drop(); }
    table by_level {
        key = { hdr.tag.flags.level: exact; }
        actions = { to_port; discard; }
        default_action = to_port(port = 1);
    }
    apply {
        meta.level = (bit<8>) hdr.tag.flags.level;
        by_level.apply();
    }
}

control TagEgress(inout hdrs_t hdr, inout meta_t meta,
                  inout standard_metadata_t standard_metadata) { apply { } }
control TagVerify(inout hdrs_t hdr, inout meta_t meta) { apply { } }
control TagCompute(inout hdrs_t hdr, inout meta_t meta) {
    apply {
        update_checksum(condition = hdr.tag.isValid(), data = { hdr.tag.kind },
                        algo = HashAlgorithm.csum16, checksum = hdr.tag.next);
    }
}
control TagDeparser(packet_out packet, in hdrs_t hdr) {
    apply { packet.emit(hdr = hdr.tag); }
}

V1Switch<hdrs_t, meta_t>(p = TagParser(),
                         ig = TagIngress(),
                         vr = TagVerify(),
                         eg = TagEgress(),
                         dep = TagDeparser(),
                         ck = TagCompute()) main;
