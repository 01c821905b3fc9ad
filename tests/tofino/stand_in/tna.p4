/* Stand-in declarations of the TNA names the p4/tna/ and p4/t2na/ programs use
 * (written for netweft from tna.p4's documented interface), so that netweft's front
 * end can check their syntax and types.  Not Intel's tna.p4: compile with bf-p4c and
 * its own (docs/tofino.md).  t2na.p4 here includes this file. */
#ifndef STUB_TNA
#define STUB_TNA
typedef bit<9>  PortId_t;
typedef bit<16> MulticastGroupId_t;
typedef bit<5>  QueueId_t;
typedef bit<3>  MirrorType_t;
typedef bit<10> MirrorId_t;
const bit<32> PORT_METADATA_SIZE = 32w64;
const bit<16> PARSER_ERROR_OK = 16w0;
enum CounterType_t { PACKETS, BYTES, PACKETS_AND_BYTES }
enum HashAlgorithm_t { IDENTITY, RANDOM, CRC8, CRC16, CRC32, CRC64, CUSTOM }
header ingress_intrinsic_metadata_t {
    bit<1> resubmit_flag; bit<1> _pad1; bit<2> packet_version; bit<3> _pad2;
    PortId_t ingress_port; bit<48> ingress_mac_tstamp;
}
struct ingress_intrinsic_metadata_for_tm_t {
    PortId_t ucast_egress_port; bit<3> ingress_cos; QueueId_t qid;
    MulticastGroupId_t mcast_grp_a; bit<9> level2_exclusion_id; bit<16> rid;
}
struct ingress_intrinsic_metadata_from_parser_t { bit<48> global_tstamp; bit<16> parser_err; }
struct ingress_intrinsic_metadata_for_deparser_t { bit<3> drop_ctl; MirrorType_t mirror_type; }
header egress_intrinsic_metadata_t {
    bit<7> _pad0; PortId_t egress_port; bit<5> _pad1; bit<19> enq_qdepth;
    bit<5> _pad4; bit<19> deq_qdepth; bit<16> egress_rid; bit<16> pkt_length;
}
struct egress_intrinsic_metadata_from_parser_t { bit<48> global_tstamp; bit<16> parser_err; }
struct egress_intrinsic_metadata_for_deparser_t { bit<3> drop_ctl; MirrorType_t mirror_type; }
struct egress_intrinsic_metadata_for_output_port_t { bit<1> force_tx_error; }
extern Checksum { Checksum(); bit<16> update<T>(in T data); }
extern Hash<W> { Hash(HashAlgorithm_t algo); W get<D>(in D data); }
extern Random<W> { Random(); W get(); }
extern T min<T>(in T t1, in T t2);
extern T max<T>(in T t1, in T t2);
extern Counter<W, I> { Counter(bit<32> size, CounterType_t type); void count(in I index); }
extern Register<T, I> { Register(bit<32> size, T initial_value); Register(bit<32> size); }
extern RegisterAction<T, I, U> {
    RegisterAction(Register<T, I> reg);
    U execute(in I index, @optional out U rv2);
    abstract void apply(inout T value, @optional out U rv, @optional out U rv2);
}
extern Mirror {
    Mirror();
    Mirror(MirrorType_t mirror_type);
    void emit<T>(in MirrorId_t session_id, in T hdr);
}
parser IngressParserT<H, M>(packet_in pkt, out H hdr, out M ig_md,
    out ingress_intrinsic_metadata_t ig_intr_md);
parser EgressParserT<H, M>(packet_in pkt, out H hdr, out M eg_md,
    out egress_intrinsic_metadata_t eg_intr_md);
control IngressT<H, M>(inout H hdr, inout M ig_md, in ingress_intrinsic_metadata_t ig_intr_md,
    in ingress_intrinsic_metadata_from_parser_t ig_intr_md_from_prsr,
    inout ingress_intrinsic_metadata_for_deparser_t ig_intr_md_for_dprsr,
    inout ingress_intrinsic_metadata_for_tm_t ig_intr_md_for_tm);
control EgressT<H, M>(inout H hdr, inout M eg_md, in egress_intrinsic_metadata_t eg_intr_md,
    in egress_intrinsic_metadata_from_parser_t eg_intr_md_from_prsr,
    inout egress_intrinsic_metadata_for_deparser_t eg_intr_md_for_dprsr,
    inout egress_intrinsic_metadata_for_output_port_t eg_intr_md_for_oport);
control IngressDeparserT<H, M>(packet_out pkt, inout H hdr, in M metadata,
    in ingress_intrinsic_metadata_for_deparser_t ig_intr_md_for_dprsr);
control EgressDeparserT<H, M>(packet_out pkt, inout H hdr, in M metadata,
    in egress_intrinsic_metadata_for_deparser_t eg_intr_md_for_dprsr);
package Pipeline<IH, IM, EH, EM>(IngressParserT<IH, IM> ingress_parser, IngressT<IH, IM> ingress,
    IngressDeparserT<IH, IM> ingress_deparser, EgressParserT<EH, EM> egress_parser,
    EgressT<EH, EM> egress, EgressDeparserT<EH, EM> egress_deparser);
package Switch<IH0, IM0, EH0, EM0>(Pipeline<IH0, IM0, EH0, EM0> pipe0);
#endif
