-- netweft_uet.lua: Wireshark/tshark dissector for netweft's Ultra Ethernet
-- Transport headers (PDS + SES over UDP 4793), for Wireshark builds without the
-- built-in UET dissector (e.g. Debian's 4.0). Layout: docs/wire.md; the field
-- names are nwuet.<part>.<name of the C codec's struct field>.
--
--   tshark -X lua_script:netweft_uet.lua -r capture.pcap -V
--   wireshark -X lua_script:netweft_uet.lua capture.pcap
--
-- On builds that already have a "uet" dissector this script registers its
-- protocol but leaves UDP port 4793 to the built-in one (use Decode As).
-- Another port: tshark -o nwuet.extra_udp_port:5000 ..., or -d udp.port==5000,nwuet.
-- A malformed packet gets the same verdict the C codec gives it, in the field
-- nwuet.error (the text of nw_wire_strerror).
--
-- UDP GSO: a capture on the sending host (or on loopback) holds the datagrams
-- the engine handed the kernel, where several packets of one PDC may travel as
-- one super-datagram (the kernel segments it later). The dissector finds the
-- segment size from the first packet (its declared payload length, or for the
-- first packet of a message the offset where the same PDC's next packet
-- starts) and decodes each segment as its own packet, in its own nwuet tree
-- with nwuet.gso_size and nwuet.gso_segment. Force a size with
-- -o nwuet.gso_segment_size:N (0 = find it).

local nwuet = Proto("nwuet", "netweft Ultra Ethernet Transport")

local UDP_PORT = 4793
local MAX_PKT = 64 + 16383
local SES_VERSION = 0

local PDS_TYPES = {
    [2] = "RUD", [3] = "ROD", [4] = "RUDI_REQ", [5] = "RUDI_RESP", [6] = "UUD",
    [7] = "ACK", [8] = "ACK_CC", [9] = "ACK_CCX", [10] = "NACK", [11] = "CTRL",
    [12] = "NACK_CCX", [13] = "RUD_CC", [14] = "ROD_CC",
}
local PDS_LEN = {
    [2] = 12, [3] = 12, [13] = 16, [14] = 16, [4] = 8, [5] = 8, [6] = 4,
    [7] = 12, [8] = 32, [9] = 40, [10] = 16, [12] = 32, [11] = 16,
}
local NEXT_HEADERS = {
    [0] = "NONE", [1] = "REQ_SMALL", [2] = "REQ_MEDIUM", [3] = "REQ_STD", [4] = "RSP",
    [5] = "RSP_DATA", [6] = "RSP_DATA_SMALL", [15] = "NW_PARITY",
}
local NEXT_LEN = { [0] = 0, [3] = 44, [4] = 12, [5] = 20, [6] = 4, [15] = 12 }
local CTRL_TYPES = {
    [0] = "NOOP", [1] = "REQ_ACK", [2] = "CLEAR", [3] = "REQ_CLEAR", [4] = "CLOSE",
    [5] = "REQ_CLOSE", [6] = "PROBE", [7] = "CREDIT", [8] = "CREDIT_REQ",
}
local NACK_CODES = {
    [0x01] = "TRIMMED", [0x02] = "TRIMMED_LASTHOP", [0x03] = "TRIMMED_ACK",
    [0x04] = "NO_PDC_AVAIL", [0x05] = "NO_CCC_AVAIL", [0x06] = "NO_BITMAP",
    [0x07] = "NO_PKT_BUFFER", [0x08] = "NO_GTD_DEL_AVAIL", [0x09] = "NO_SES_MSG_AVAIL",
    [0x0A] = "NO_RESOURCE", [0x0B] = "PSN_OOR_WINDOW", [0x0D] = "ROD_OOO",
    [0x0E] = "INV_DPDCID", [0x0F] = "PDC_HDR_MISMATCH", [0x10] = "CLOSING",
    [0x11] = "CLOSING_IN_ERR", [0x12] = "PKT_NOT_RCVD", [0x13] = "GTD_DEL_RESP_UNAVAIL",
    [0x14] = "ACK_WITH_DATA", [0x15] = "INVALID_SYN", [0x16] = "PDC_MODE_MISMATCH",
    [0x17] = "NEW_START_PSN", [0x18] = "RCVD_SES_PROCG", [0x19] = "UNEXP_EVENT",
    [0x1A] = "RCVR_INFER_LOSS", [0xFD] = "EXP_NORMAL", [0xFE] = "EXP_ERR",
    [0xFF] = "EXP_FATAL",
}
local SES_OPCODES = {
    [0x00] = "NO_OP", [0x01] = "WRITE", [0x02] = "READ", [0x03] = "ATOMIC",
    [0x04] = "FETCHING_ATOMIC", [0x05] = "SEND", [0x06] = "RENDEZVOUS_SEND",
    [0x07] = "DATAGRAM_SEND", [0x08] = "DEFERRABLE_SEND", [0x09] = "TAGGED_SEND",
    [0x0A] = "RENDEZVOUS_TSEND", [0x0B] = "DEFERRABLE_TSEND", [0x0C] = "DEFERRABLE_RTR",
    [0x0D] = "TSEND_ATOMIC", [0x0E] = "TSEND_FETCH_ATOMIC", [0x0F] = "MSG_ERROR",
}
local RSP_OPCODES = {
    [0] = "DEFAULT", [1] = "RESPONSE", [2] = "WITH_DATA", [3] = "NONE",
}
local ERRORS = {
    trunc = "truncated packet",
    oversize = "oversized packet",
    version = "unsupported SES version",
    type = "reserved or unsupported PDS type",
    nexthdr = "reserved or unsupported next header or control type",
}

local F_TRIMMED, F_SYN, SES_SOM = 0x40, 0x04, 0x01
local CC_CREDIT = 1

-- ---- fields ---------------------------------------------------------------
local f = nwuet.fields
local function pds(name, ctor, label, ...) f["pds_" .. name] = ctor("nwuet.pds." .. name, label, ...) end
local function ses(name, ctor, label, ...) f["ses_" .. name] = ctor("nwuet.ses." .. name, label, ...) end
local function rsp(name, ctor, label, ...) f["rsp_" .. name] = ctor("nwuet.rsp." .. name, label, ...) end
local function par(name, ctor, label, ...) f["parity_" .. name] = ctor("nwuet.parity." .. name, label, ...) end
local U8, U16, U24, U32, U64 = ProtoField.uint8, ProtoField.uint16, ProtoField.uint24,
    ProtoField.uint32, ProtoField.uint64

pds("type", U16, "Type", base.DEC, PDS_TYPES, 0xf800)
pds("next_hdr", U16, "Next header", base.DEC, NEXT_HEADERS, 0x0780)
pds("ctl_type", U16, "Control type", base.DEC, CTRL_TYPES, 0x0780)
pds("flags", U16, "Flags", base.HEX, nil, 0x007f)
pds("clear_psn_off", ProtoField.int16, "Clear PSN offset", base.DEC)
pds("psn", U32, "PSN", base.DEC)
pds("spdcid", U16, "Source PDC id", base.DEC)
pds("dpdcid", U16, "Destination PDC id", base.DEC)
pds("use_rsv_pdc", U16, "Use reserved PDC", base.DEC, nil, 0x8000)
pds("start_psn_off", U16, "Start PSN offset", base.DEC, nil, 0x0fff)
pds("ccc_id", U8, "CCC id", base.DEC)
pds("credit_target", U24, "Credit target", base.DEC)
pds("rudi_pkt_id", U32, "RUDI packet id", base.DEC)
pds("probe_opaque", U16, "Probe opaque", base.HEX)
pds("ctrl_payload", U32, "Control payload", base.HEX)
pds("ack_psn_off", ProtoField.int16, "ACK PSN offset", base.DEC)
pds("cack_psn", U32, "Cumulative ACK PSN", base.DEC)
pds("cc_type", U8, "CC type", base.DEC, { [0] = "NSCC", [1] = "CREDIT" }, 0xf0)
pds("cc_flags", U8, "CC flags", base.HEX, nil, 0x0f)
pds("mpr", U8, "Maximum PSN range", base.DEC)
pds("sack_psn_off", ProtoField.int16, "SACK PSN offset", base.DEC)
pds("sack_bitmap", U64, "SACK bitmap", base.HEX)
pds("service_time", U16, "Service time", base.DEC)
pds("restore_cwnd", U8, "Restore cwnd", base.DEC, nil, 0x80)
pds("rcv_cwnd_pend", U8, "Receiver cwnd penalty", base.DEC, nil, 0x7f)
pds("rcvd_bytes", U24, "Received bytes", base.DEC)
pds("credit", U24, "Credit", base.DEC)
pds("ooo_count", U16, "Out-of-order count", base.DEC)
pds("ccx_state", ProtoField.bytes, "CCX state")
pds("nack_code", U8, "NACK code", base.HEX, NACK_CODES)
pds("nack_vendor", U8, "NACK vendor code", base.HEX)
pds("nack_psn", U32, "NACK PSN", base.DEC)
pds("nack_payload", U32, "NACK payload", base.DEC)

ses("opcode", U8, "Opcode", base.HEX, SES_OPCODES, 0x3f)
ses("version", U8, "Version", base.DEC, nil, 0xc0)
ses("flags", U8, "Flags", base.HEX, nil, 0x3f)
ses("message_id", U16, "Message id", base.DEC)
ses("ri_generation", U8, "Resource index generation", base.DEC)
ses("job_id", U24, "Job id", base.DEC)
ses("pid_on_fep", U16, "PID on FEP", base.DEC, nil, 0x0fff)
ses("resource_index", U16, "Resource index", base.DEC, nil, 0x0fff)
ses("buffer_offset", U64, "Buffer offset", base.DEC)
ses("initiator", U32, "Initiator", base.HEX)
ses("mem_key", U64, "Memory key / match bits", base.HEX)
ses("header_data", U64, "Header data", base.HEX)
ses("payload_length", U32, "Payload length", base.DEC, nil, 0x3fff)
ses("message_offset", U32, "Message offset", base.DEC)
ses("request_length", U32, "Request length", base.DEC)

rsp("list", U8, "List", base.DEC, nil, 0xc0)
rsp("opcode", U8, "Opcode", base.DEC, RSP_OPCODES, 0x3f)
rsp("version", U8, "Version", base.DEC, nil, 0xc0)
rsp("return_code", U8, "Return code", base.HEX, nil, 0x3f)
rsp("message_id", U16, "Message id", base.DEC)
rsp("ri_generation", U8, "Resource index generation", base.DEC)
rsp("job_id", U24, "Job id", base.DEC)
rsp("modified_length", U32, "Modified length", base.DEC)
rsp("read_req_message_id", U16, "Read request message id", base.DEC)
rsp("payload_length", U16, "Payload length", base.DEC, nil, 0x3fff)
rsp("message_offset", U32, "Message offset", base.DEC)

par("base_psn", U32, "Base PSN", base.DEC)
par("k", U8, "Data packets (k)", base.DEC)
par("m", U8, "Parity packets (m)", base.DEC)
par("index", U8, "Parity index", base.DEC)
par("shard_len", U16, "Shard length", base.DEC)

f.trimmed = ProtoField.bool("nwuet.trimmed", "Trimmed (netweft mark)")
f.payload = ProtoField.bytes("nwuet.payload", "Payload")
f.payload_len = ProtoField.uint32("nwuet.payload_len", "Payload length", base.DEC)
f.error = ProtoField.string("nwuet.error", "Malformed")
f.gso_size = ProtoField.uint32("nwuet.gso_size", "GSO segment size", base.DEC)
f.gso_segment = ProtoField.uint16("nwuet.gso_segment", "GSO segment", base.DEC)

local ef_malformed = ProtoExpert.new("nwuet.malformed", "Malformed UET packet",
    expert.group.MALFORMED, expert.severity.ERROR)
nwuet.experts = { ef_malformed }

-- ---- header bodies (lengths already checked) -------------------------------
local function is_request(t) return t == 2 or t == 3 or t == 13 or t == 14 end
local function is_trimmable(t) return is_request(t) or t == 6 end

local function dissect_request(tvb, tree, t, flags)
    tree:add(f.pds_clear_psn_off, tvb(2, 2))
    tree:add(f.pds_psn, tvb(4, 4))
    tree:add(f.pds_spdcid, tvb(8, 2))
    if bit.band(flags, F_SYN) ~= 0 then
        tree:add(f.pds_use_rsv_pdc, tvb(10, 2))
        tree:add(f.pds_start_psn_off, tvb(10, 2))
    else
        tree:add(f.pds_dpdcid, tvb(10, 2))
    end
    if t == 13 or t == 14 then
        tree:add(f.pds_ccc_id, tvb(12, 1))
        tree:add(f.pds_credit_target, tvb(13, 3))
    end
end

local function dissect_ack(tvb, tree, t)
    tree:add(f.pds_ack_psn_off, tvb(2, 2))
    tree:add(f.pds_cack_psn, tvb(4, 4))
    tree:add(f.pds_spdcid, tvb(8, 2))
    tree:add(f.pds_dpdcid, tvb(10, 2))
    if t == 7 then return end
    tree:add(f.pds_cc_type, tvb(12, 1))
    tree:add(f.pds_cc_flags, tvb(12, 1))
    tree:add(f.pds_mpr, tvb(13, 1))
    tree:add(f.pds_sack_psn_off, tvb(14, 2))
    tree:add(f.pds_sack_bitmap, tvb(16, 8))
    if t == 9 then
        tree:add(f.pds_ccx_state, tvb(24, 16))
        return
    end
    if bit.rshift(tvb(12, 1):uint(), 4) == CC_CREDIT then
        tree:add(f.pds_credit, tvb(24, 3))
    else
        tree:add(f.pds_service_time, tvb(24, 2))
        tree:add(f.pds_restore_cwnd, tvb(26, 1))
        tree:add(f.pds_rcv_cwnd_pend, tvb(26, 1))
        tree:add(f.pds_rcvd_bytes, tvb(27, 3))
    end
    tree:add(f.pds_ooo_count, tvb(30, 2))
end

local function dissect_nack(tvb, tree, t)
    tree:add(f.pds_nack_code, tvb(2, 1))
    tree:add(f.pds_nack_vendor, tvb(3, 1))
    tree:add(f.pds_nack_psn, tvb(4, 4))
    tree:add(f.pds_spdcid, tvb(8, 2))
    tree:add(f.pds_dpdcid, tvb(10, 2))
    tree:add(f.pds_nack_payload, tvb(12, 4))
    if t == 12 then tree:add(f.pds_ccx_state, tvb(16, 16)) end
end

local function dissect_ctrl(tvb, tree)
    tree:add(f.pds_probe_opaque, tvb(2, 2))
    tree:add(f.pds_psn, tvb(4, 4))
    tree:add(f.pds_spdcid, tvb(8, 2))
    tree:add(f.pds_dpdcid, tvb(10, 2))
    tree:add(f.pds_ctrl_payload, tvb(12, 4))
end

local function dissect_pds_body(tvb, tree, t, flags)
    if is_request(t) then dissect_request(tvb, tree, t, flags)
    elseif t == 7 or t == 8 or t == 9 then dissect_ack(tvb, tree, t)
    elseif t == 10 or t == 12 then dissect_nack(tvb, tree, t)
    elseif t == 11 then dissect_ctrl(tvb, tree)
    elseif t == 4 or t == 5 then tree:add(f.pds_rudi_pkt_id, tvb(4, 4))
    end
end

-- Each returns the payload length its header announces, or nil.
local function dissect_ses_std(r, tree)
    tree:add(f.ses_opcode, r(0, 1))
    tree:add(f.ses_version, r(1, 1))
    tree:add(f.ses_flags, r(1, 1))
    tree:add(f.ses_message_id, r(2, 2))
    tree:add(f.ses_ri_generation, r(4, 1))
    tree:add(f.ses_job_id, r(5, 3))
    tree:add(f.ses_pid_on_fep, r(8, 2))
    tree:add(f.ses_resource_index, r(10, 2))
    tree:add(f.ses_buffer_offset, r(12, 8))
    tree:add(f.ses_initiator, r(20, 4))
    tree:add(f.ses_mem_key, r(24, 8))
    local declared = nil
    if bit.band(r(1, 1):uint(), SES_SOM) ~= 0 then
        tree:add(f.ses_header_data, r(32, 8))
    else
        tree:add(f.ses_payload_length, r(32, 4))
        tree:add(f.ses_message_offset, r(36, 4))
        declared = bit.band(r(32, 4):uint(), 0x3fff)
    end
    tree:add(f.ses_request_length, r(40, 4))
    return declared
end

local function dissect_rsp(r, tree, nh)
    tree:add(f.rsp_list, r(0, 1))
    tree:add(f.rsp_opcode, r(0, 1))
    tree:add(f.rsp_version, r(1, 1))
    tree:add(f.rsp_return_code, r(1, 1))
    if nh == 6 then
        tree:add(f.rsp_payload_length, r(2, 2))
        return bit.band(r(2, 2):uint(), 0x3fff)
    end
    tree:add(f.rsp_message_id, r(2, 2))
    tree:add(f.rsp_job_id, r(5, 3))
    if nh == 4 then
        tree:add(f.rsp_ri_generation, r(4, 1))
        tree:add(f.rsp_modified_length, r(8, 4))
        return nil
    end
    tree:add(f.rsp_read_req_message_id, r(8, 2))
    tree:add(f.rsp_payload_length, r(10, 2))
    tree:add(f.rsp_modified_length, r(12, 4))
    tree:add(f.rsp_message_offset, r(16, 4))
    return bit.band(r(10, 2):uint(), 0x3fff)
end

local function dissect_parity(r, tree)
    tree:add(f.parity_base_psn, r(0, 4))
    tree:add(f.parity_k, r(4, 1))
    tree:add(f.parity_m, r(5, 1))
    tree:add(f.parity_index, r(6, 1))
    tree:add(f.parity_shard_len, r(8, 2))
    return r(8, 2):uint()
end

-- ---- the dissector ---------------------------------------------------------
-- A short Info-column summary of the PDS header (its length is already checked).
local function info_summary(tvb, t, nibble)
    if not (is_request(t) or (t >= 7 and t <= 12)) then return "" end  -- no PSN, no PDC
    local pdc = " pdc=" .. tvb(8, 2):uint()
    if is_request(t) or t == 11 then
        local ctl = t == 11 and (" " .. CTRL_TYPES[nibble]) or ""
        return ctl .. " psn=" .. tvb(4, 4):uint() .. pdc
    elseif t == 7 or t == 8 or t == 9 then
        return " cack=" .. tvb(4, 4):uint() .. pdc
    elseif t == 10 or t == 12 then
        local code = tvb(2, 1):uint()
        return " " .. (NACK_CODES[code] or code) .. " psn=" .. tvb(4, 4):uint() .. pdc
    end
    return ""
end

local function malformed(tree, pinfo, key)
    local item = tree:add(f.error, ERRORS[key])
    item:add_proto_expert_info(ef_malformed, ERRORS[key])
    pinfo.cols.info:append(" [" .. ERRORS[key] .. "]")
    return -1
end

-- Dissects one UDP payload (or one GSO segment of it: gso = {size, index});
-- always claims it (a malformed one gets nwuet.error).
local function dissect(tvb, pinfo, root, gso)
    local len = tvb:len()
    pinfo.cols.protocol = "UET"
    pinfo.cols.info = "UET"
    local tree = root:add(nwuet, tvb())
    if gso then
        tree:add(f.gso_size, gso[1])
        tree:add(f.gso_segment, gso[2])
        tree:append_text(string.format(" (GSO segment %d, %d bytes each)", gso[2], gso[1]))
    end
    if tvb:captured_len() < len then return malformed(tree, pinfo, "trunc") end
    if len > MAX_PKT then return malformed(tree, pinfo, "oversize") end
    if len < 2 then return malformed(tree, pinfo, "trunc") end

    local word = tvb(0, 2):uint()
    local t = bit.rshift(word, 11)
    local nibble = bit.band(bit.rshift(word, 7), 0x0f)
    local flags = bit.band(word, 0x7f)
    local plen = PDS_LEN[t]
    if plen == nil then return malformed(tree, pinfo, "type") end

    local nlen = 0
    if t == 11 then
        if CTRL_TYPES[nibble] == nil then return malformed(tree, pinfo, "nexthdr") end
    else
        nlen = NEXT_LEN[nibble]
        -- ACKs and NACKs carry SES responses only (no request, no parity)
        local response_only = (t >= 7 and t <= 10) or t == 12
        if response_only and (nibble == 3 or nibble == 15) then nlen = nil end
        if nlen == nil then return malformed(tree, pinfo, "nexthdr") end
    end
    if len < plen + nlen then return malformed(tree, pinfo, "trunc") end

    local pds_tree = tree:add(tvb(0, plen), "PDS " .. PDS_TYPES[t])
    pds_tree:add(f.pds_type, tvb(0, 2))
    if t == 11 then
        pds_tree:add(f.pds_ctl_type, tvb(0, 2))
    else
        pds_tree:add(f.pds_next_hdr, tvb(0, 2))
    end
    pds_tree:add(f.pds_flags, tvb(0, 2))
    dissect_pds_body(tvb, pds_tree, t, flags)
    pinfo.cols.info = "UET " .. PDS_TYPES[t] .. info_summary(tvb, t, nibble)

    local declared = nil
    if nlen > 0 then
        local r = tvb(plen, nlen)
        local next_tree = tree:add(r, NEXT_HEADERS[nibble])
        if nibble == 3 or (nibble >= 4 and nibble <= 6) then
            if bit.rshift(r(1, 1):uint(), 6) ~= SES_VERSION then
                return malformed(tree, pinfo, "version")
            end
        end
        if nibble == 3 then
            declared = dissect_ses_std(r, next_tree)
            pinfo.cols.info:append(" " .. (SES_OPCODES[bit.band(r(0, 1):uint(), 0x3f)] or "opcode?"))
        elseif nibble == 15 then
            declared = dissect_parity(r, next_tree)
            local block, k, m, index = r(0, 4):uint(), r(4, 1):uint(), r(5, 1):uint(), r(6, 1):uint()
            next_tree:append_text(string.format(": block %d (%d data), parity %d of %d",
                                                block, k, index + 1, m))
            pinfo.cols.info:append(string.format(" parity block=%d index=%d/%d", block, index, m))
        else
            declared = dissect_rsp(r, next_tree, nibble)
        end
    end

    local hdr = plen + nlen
    local trimmed = is_trimmable(t) and bit.band(flags, F_TRIMMED) ~= 0
    if trimmed then tree:add(f.trimmed, tvb(0, 2), true) end
    local payload_len = len - hdr
    if declared ~= nil and not trimmed then
        if payload_len < declared then return malformed(tree, pinfo, "trunc") end
        if payload_len > declared then return malformed(tree, pinfo, "oversize") end
    end
    tree:add(f.payload_len, payload_len)
    if payload_len > 0 then tree:add(f.payload, tvb(hdr, payload_len)) end
    return len
end

-- ---- UDP GSO super-datagrams ---------------------------------------------------
-- Payload bytes the headers at offset 0 announce (0 for packets that carry none),
-- or nil when the packet's payload is "the rest of the datagram" (the first packet
-- of a message, UUD) or its headers are incomplete.
local function declared_payload(tvb, t, plen, nibble, nlen)
    if tvb:len() < plen + nlen then return nil end
    if t == 11 or nibble == 0 or nibble == 4 then return 0 end
    local r = tvb(plen, nlen)
    if nibble == 3 then
        if bit.band(r(1, 1):uint(), SES_SOM) ~= 0 then return nil end
        return bit.band(r(32, 4):uint(), 0x3fff)
    elseif nibble == 5 then return bit.band(r(10, 2):uint(), 0x3fff)
    elseif nibble == 6 then return bit.band(r(2, 2):uint(), 0x3fff)
    elseif nibble == 15 then return r(8, 2):uint()
    end
    return nil
end

-- Whether a packet of the same PDC starts at off: the same PDS type and source
-- PDC id, and for requests a PSN near the first one's (ACKs, NACKs, CTRL: the
-- same destination PDC id). Payload bytes matching all of that by chance are
-- improbable enough not to matter.
local function continues(tvb, off, t)
    if tvb:len() - off < 12 or t == 6 then return false end
    if bit.rshift(tvb(off, 2):uint(), 11) ~= t then return false end
    if tvb(off + 8, 2):uint() ~= tvb(8, 2):uint() then return false end
    if is_request(t) then
        local d = (tvb(off + 4, 4):uint() - tvb(4, 4):uint()) % 4294967296
        return d > 0 and d < 65536
    end
    return tvb(off + 10, 2):uint() == tvb(10, 2):uint()
end

-- The GSO segment size of a datagram that holds several packets, else nil.
local function gso_segment_size(tvb)
    local len = tvb:len()
    local forced = nwuet.prefs.gso_segment_size
    if forced > 0 then return forced < len and forced or nil end
    if len < 4 or tvb:captured_len() < len then return nil end
    local word = tvb(0, 2):uint()
    local t = bit.rshift(word, 11)
    local plen = PDS_LEN[t]
    if plen == nil then return nil end
    local nibble = bit.band(bit.rshift(word, 7), 0x0f)
    local nlen = t == 11 and 0 or NEXT_LEN[nibble]
    if nlen == nil or len < plen + nlen + 12 then return nil end
    if is_trimmable(t) and bit.band(word, F_TRIMMED) ~= 0 then return nil end
    local declared = declared_payload(tvb, t, plen, nibble, nlen)
    if declared ~= nil then
        local seg = plen + nlen + declared
        if seg < len and continues(tvb, seg, t) then return seg end
        return nil
    end
    if not is_request(t) then return nil end
    for off = plen + nlen + 1, len - 12 do  -- a message's first packet: find the next one
        if continues(tvb, off, t) then return off end
    end
    return nil
end

function nwuet.dissector(tvb, pinfo, root)
    local len = tvb:len()
    local seg = gso_segment_size(tvb)
    if seg == nil then
        dissect(tvb, pinfo, root)
        return len
    end
    local infos, index = {}, 0
    for off = 0, len - 1, seg do
        local n = math.min(seg, len - off)
        index = index + 1
        dissect(tvb:range(off, n):tvb(), pinfo, root, { seg, index })
        infos[#infos + 1] = tostring(pinfo.cols.info)
    end
    pinfo.cols.info = "GSO x" .. index .. ": " .. table.concat(infos, " | ")
    return len
end

local function builtin_uet_present()
    local ok, handle = pcall(Dissector.get, "uet")
    return ok and handle ~= nil
end

-- Port registration: 4793 unless Wireshark has its own UET dissector, plus one
-- extra port through the preference (tshark -o nwuet.extra_udp_port:5000) or
-- any port through Decode As (tshark -d udp.port==5000,nwuet).
local udp_table = DissectorTable.get("udp.port")
local extra_port = 0

nwuet.prefs.extra_udp_port = Pref.uint("Extra UDP port", 0,
    "Another UDP destination port to decode as UET, besides 4793 (0: none)")
nwuet.prefs.gso_segment_size = Pref.uint("GSO segment size", 0,
    "Split every datagram into packets of this many bytes (UDP GSO captures); "
    .. "0: find the size from the packets themselves")

function nwuet.prefs_changed()
    if extra_port ~= 0 and extra_port ~= UDP_PORT then udp_table:remove(extra_port, nwuet) end
    extra_port = nwuet.prefs.extra_udp_port
    if extra_port ~= 0 and extra_port ~= UDP_PORT then udp_table:add(extra_port, nwuet) end
end

udp_table:add_for_decode_as(nwuet)
if not builtin_uet_present() then udp_table:add(UDP_PORT, nwuet) end
