/*
 * netweft in-network aggregation header (P4-16, needs headers.p4).
 *
 * The one P4 declaration of the aggregation packet format described in
 * docs/aggregation.md; transport/collectives/aggregation/layer.py is its scapy
 * layer.
 * A contribution or a result is Ethernet / IPv4 / UDP (either port
 * AGG_UDP_PORT) / agg_t.  The switch sums the AGG_LANES 32-bit lanes as
 * two's-complement integers (wrapping modulo 2^32) and keeps the maximum of
 * the signed 16-bit exponents.
 */
#ifndef NETWEFT_AGGREGATION_HEADERS_P4
#define NETWEFT_AGGREGATION_HEADERS_P4

#include "headers.p4"

/* UDP port of aggregation traffic: in IANA's dynamic range (49152-65535,
 * never assigned) and above Linux's default ephemeral range (32768-60999),
 * so no kernel-chosen source port looks like aggregation traffic. */
const bit<16> AGG_UDP_PORT = 61440;

/* Version of the header layout; packets with another one are malformed. */
const bit<8> AGG_VERSION = 1;

/* K: the 32-bit lanes per packet (one quantization block), a compile-time
 * parameter: 64 by default (SwitchML's Tofino-sized packet, the wire format
 * of the Tofino variants p4/tna/aggregation.p4 and p4/t2na/aggregation.p4), any multiple of 32 from 64 to 1024 with
 * `netweft compile -D AGG_LANES=256` (compile_p4(..., defines={"AGG_LANES":
 * "256"})) for targets without a stateful-ALU limit (docs/aggregation.md). */
#ifndef AGG_LANES
#define AGG_LANES 64
#endif
#if AGG_LANES < 64 || AGG_LANES > 1024 || AGG_LANES % 32 != 0
#error "AGG_LANES must be a multiple of 32 from 64 to 1024"
#endif
const bit<16> AGG_LANE_COUNT = AGG_LANES;

/* Lanes 32g .. 32g+31 (empty past AGG_LANES). */
#define AGG_LANE_GROUP_0(M) \
    M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) \
    M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15) \
    M(16) M(17) M(18) M(19) M(20) M(21) M(22) M(23) \
    M(24) M(25) M(26) M(27) M(28) M(29) M(30) M(31)
#define AGG_LANE_GROUP_1(M) \
    M(32) M(33) M(34) M(35) M(36) M(37) M(38) M(39) \
    M(40) M(41) M(42) M(43) M(44) M(45) M(46) M(47) \
    M(48) M(49) M(50) M(51) M(52) M(53) M(54) M(55) \
    M(56) M(57) M(58) M(59) M(60) M(61) M(62) M(63)
#if AGG_LANES > 64
#define AGG_LANE_GROUP_2(M) \
    M(64) M(65) M(66) M(67) M(68) M(69) M(70) M(71) \
    M(72) M(73) M(74) M(75) M(76) M(77) M(78) M(79) \
    M(80) M(81) M(82) M(83) M(84) M(85) M(86) M(87) \
    M(88) M(89) M(90) M(91) M(92) M(93) M(94) M(95)
#else
#define AGG_LANE_GROUP_2(M)
#endif
#if AGG_LANES > 96
#define AGG_LANE_GROUP_3(M) \
    M(96) M(97) M(98) M(99) M(100) M(101) M(102) M(103) \
    M(104) M(105) M(106) M(107) M(108) M(109) M(110) M(111) \
    M(112) M(113) M(114) M(115) M(116) M(117) M(118) M(119) \
    M(120) M(121) M(122) M(123) M(124) M(125) M(126) M(127)
#else
#define AGG_LANE_GROUP_3(M)
#endif
#if AGG_LANES > 128
#define AGG_LANE_GROUP_4(M) \
    M(128) M(129) M(130) M(131) M(132) M(133) M(134) M(135) \
    M(136) M(137) M(138) M(139) M(140) M(141) M(142) M(143) \
    M(144) M(145) M(146) M(147) M(148) M(149) M(150) M(151) \
    M(152) M(153) M(154) M(155) M(156) M(157) M(158) M(159)
#else
#define AGG_LANE_GROUP_4(M)
#endif
#if AGG_LANES > 160
#define AGG_LANE_GROUP_5(M) \
    M(160) M(161) M(162) M(163) M(164) M(165) M(166) M(167) \
    M(168) M(169) M(170) M(171) M(172) M(173) M(174) M(175) \
    M(176) M(177) M(178) M(179) M(180) M(181) M(182) M(183) \
    M(184) M(185) M(186) M(187) M(188) M(189) M(190) M(191)
#else
#define AGG_LANE_GROUP_5(M)
#endif
#if AGG_LANES > 192
#define AGG_LANE_GROUP_6(M) \
    M(192) M(193) M(194) M(195) M(196) M(197) M(198) M(199) \
    M(200) M(201) M(202) M(203) M(204) M(205) M(206) M(207) \
    M(208) M(209) M(210) M(211) M(212) M(213) M(214) M(215) \
    M(216) M(217) M(218) M(219) M(220) M(221) M(222) M(223)
#else
#define AGG_LANE_GROUP_6(M)
#endif
#if AGG_LANES > 224
#define AGG_LANE_GROUP_7(M) \
    M(224) M(225) M(226) M(227) M(228) M(229) M(230) M(231) \
    M(232) M(233) M(234) M(235) M(236) M(237) M(238) M(239) \
    M(240) M(241) M(242) M(243) M(244) M(245) M(246) M(247) \
    M(248) M(249) M(250) M(251) M(252) M(253) M(254) M(255)
#else
#define AGG_LANE_GROUP_7(M)
#endif
#if AGG_LANES > 256
#define AGG_LANE_GROUP_8(M) \
    M(256) M(257) M(258) M(259) M(260) M(261) M(262) M(263) \
    M(264) M(265) M(266) M(267) M(268) M(269) M(270) M(271) \
    M(272) M(273) M(274) M(275) M(276) M(277) M(278) M(279) \
    M(280) M(281) M(282) M(283) M(284) M(285) M(286) M(287)
#else
#define AGG_LANE_GROUP_8(M)
#endif
#if AGG_LANES > 288
#define AGG_LANE_GROUP_9(M) \
    M(288) M(289) M(290) M(291) M(292) M(293) M(294) M(295) \
    M(296) M(297) M(298) M(299) M(300) M(301) M(302) M(303) \
    M(304) M(305) M(306) M(307) M(308) M(309) M(310) M(311) \
    M(312) M(313) M(314) M(315) M(316) M(317) M(318) M(319)
#else
#define AGG_LANE_GROUP_9(M)
#endif
#if AGG_LANES > 320
#define AGG_LANE_GROUP_10(M) \
    M(320) M(321) M(322) M(323) M(324) M(325) M(326) M(327) \
    M(328) M(329) M(330) M(331) M(332) M(333) M(334) M(335) \
    M(336) M(337) M(338) M(339) M(340) M(341) M(342) M(343) \
    M(344) M(345) M(346) M(347) M(348) M(349) M(350) M(351)
#else
#define AGG_LANE_GROUP_10(M)
#endif
#if AGG_LANES > 352
#define AGG_LANE_GROUP_11(M) \
    M(352) M(353) M(354) M(355) M(356) M(357) M(358) M(359) \
    M(360) M(361) M(362) M(363) M(364) M(365) M(366) M(367) \
    M(368) M(369) M(370) M(371) M(372) M(373) M(374) M(375) \
    M(376) M(377) M(378) M(379) M(380) M(381) M(382) M(383)
#else
#define AGG_LANE_GROUP_11(M)
#endif
#if AGG_LANES > 384
#define AGG_LANE_GROUP_12(M) \
    M(384) M(385) M(386) M(387) M(388) M(389) M(390) M(391) \
    M(392) M(393) M(394) M(395) M(396) M(397) M(398) M(399) \
    M(400) M(401) M(402) M(403) M(404) M(405) M(406) M(407) \
    M(408) M(409) M(410) M(411) M(412) M(413) M(414) M(415)
#else
#define AGG_LANE_GROUP_12(M)
#endif
#if AGG_LANES > 416
#define AGG_LANE_GROUP_13(M) \
    M(416) M(417) M(418) M(419) M(420) M(421) M(422) M(423) \
    M(424) M(425) M(426) M(427) M(428) M(429) M(430) M(431) \
    M(432) M(433) M(434) M(435) M(436) M(437) M(438) M(439) \
    M(440) M(441) M(442) M(443) M(444) M(445) M(446) M(447)
#else
#define AGG_LANE_GROUP_13(M)
#endif
#if AGG_LANES > 448
#define AGG_LANE_GROUP_14(M) \
    M(448) M(449) M(450) M(451) M(452) M(453) M(454) M(455) \
    M(456) M(457) M(458) M(459) M(460) M(461) M(462) M(463) \
    M(464) M(465) M(466) M(467) M(468) M(469) M(470) M(471) \
    M(472) M(473) M(474) M(475) M(476) M(477) M(478) M(479)
#else
#define AGG_LANE_GROUP_14(M)
#endif
#if AGG_LANES > 480
#define AGG_LANE_GROUP_15(M) \
    M(480) M(481) M(482) M(483) M(484) M(485) M(486) M(487) \
    M(488) M(489) M(490) M(491) M(492) M(493) M(494) M(495) \
    M(496) M(497) M(498) M(499) M(500) M(501) M(502) M(503) \
    M(504) M(505) M(506) M(507) M(508) M(509) M(510) M(511)
#else
#define AGG_LANE_GROUP_15(M)
#endif
#if AGG_LANES > 512
#define AGG_LANE_GROUP_16(M) \
    M(512) M(513) M(514) M(515) M(516) M(517) M(518) M(519) \
    M(520) M(521) M(522) M(523) M(524) M(525) M(526) M(527) \
    M(528) M(529) M(530) M(531) M(532) M(533) M(534) M(535) \
    M(536) M(537) M(538) M(539) M(540) M(541) M(542) M(543)
#else
#define AGG_LANE_GROUP_16(M)
#endif
#if AGG_LANES > 544
#define AGG_LANE_GROUP_17(M) \
    M(544) M(545) M(546) M(547) M(548) M(549) M(550) M(551) \
    M(552) M(553) M(554) M(555) M(556) M(557) M(558) M(559) \
    M(560) M(561) M(562) M(563) M(564) M(565) M(566) M(567) \
    M(568) M(569) M(570) M(571) M(572) M(573) M(574) M(575)
#else
#define AGG_LANE_GROUP_17(M)
#endif
#if AGG_LANES > 576
#define AGG_LANE_GROUP_18(M) \
    M(576) M(577) M(578) M(579) M(580) M(581) M(582) M(583) \
    M(584) M(585) M(586) M(587) M(588) M(589) M(590) M(591) \
    M(592) M(593) M(594) M(595) M(596) M(597) M(598) M(599) \
    M(600) M(601) M(602) M(603) M(604) M(605) M(606) M(607)
#else
#define AGG_LANE_GROUP_18(M)
#endif
#if AGG_LANES > 608
#define AGG_LANE_GROUP_19(M) \
    M(608) M(609) M(610) M(611) M(612) M(613) M(614) M(615) \
    M(616) M(617) M(618) M(619) M(620) M(621) M(622) M(623) \
    M(624) M(625) M(626) M(627) M(628) M(629) M(630) M(631) \
    M(632) M(633) M(634) M(635) M(636) M(637) M(638) M(639)
#else
#define AGG_LANE_GROUP_19(M)
#endif
#if AGG_LANES > 640
#define AGG_LANE_GROUP_20(M) \
    M(640) M(641) M(642) M(643) M(644) M(645) M(646) M(647) \
    M(648) M(649) M(650) M(651) M(652) M(653) M(654) M(655) \
    M(656) M(657) M(658) M(659) M(660) M(661) M(662) M(663) \
    M(664) M(665) M(666) M(667) M(668) M(669) M(670) M(671)
#else
#define AGG_LANE_GROUP_20(M)
#endif
#if AGG_LANES > 672
#define AGG_LANE_GROUP_21(M) \
    M(672) M(673) M(674) M(675) M(676) M(677) M(678) M(679) \
    M(680) M(681) M(682) M(683) M(684) M(685) M(686) M(687) \
    M(688) M(689) M(690) M(691) M(692) M(693) M(694) M(695) \
    M(696) M(697) M(698) M(699) M(700) M(701) M(702) M(703)
#else
#define AGG_LANE_GROUP_21(M)
#endif
#if AGG_LANES > 704
#define AGG_LANE_GROUP_22(M) \
    M(704) M(705) M(706) M(707) M(708) M(709) M(710) M(711) \
    M(712) M(713) M(714) M(715) M(716) M(717) M(718) M(719) \
    M(720) M(721) M(722) M(723) M(724) M(725) M(726) M(727) \
    M(728) M(729) M(730) M(731) M(732) M(733) M(734) M(735)
#else
#define AGG_LANE_GROUP_22(M)
#endif
#if AGG_LANES > 736
#define AGG_LANE_GROUP_23(M) \
    M(736) M(737) M(738) M(739) M(740) M(741) M(742) M(743) \
    M(744) M(745) M(746) M(747) M(748) M(749) M(750) M(751) \
    M(752) M(753) M(754) M(755) M(756) M(757) M(758) M(759) \
    M(760) M(761) M(762) M(763) M(764) M(765) M(766) M(767)
#else
#define AGG_LANE_GROUP_23(M)
#endif
#if AGG_LANES > 768
#define AGG_LANE_GROUP_24(M) \
    M(768) M(769) M(770) M(771) M(772) M(773) M(774) M(775) \
    M(776) M(777) M(778) M(779) M(780) M(781) M(782) M(783) \
    M(784) M(785) M(786) M(787) M(788) M(789) M(790) M(791) \
    M(792) M(793) M(794) M(795) M(796) M(797) M(798) M(799)
#else
#define AGG_LANE_GROUP_24(M)
#endif
#if AGG_LANES > 800
#define AGG_LANE_GROUP_25(M) \
    M(800) M(801) M(802) M(803) M(804) M(805) M(806) M(807) \
    M(808) M(809) M(810) M(811) M(812) M(813) M(814) M(815) \
    M(816) M(817) M(818) M(819) M(820) M(821) M(822) M(823) \
    M(824) M(825) M(826) M(827) M(828) M(829) M(830) M(831)
#else
#define AGG_LANE_GROUP_25(M)
#endif
#if AGG_LANES > 832
#define AGG_LANE_GROUP_26(M) \
    M(832) M(833) M(834) M(835) M(836) M(837) M(838) M(839) \
    M(840) M(841) M(842) M(843) M(844) M(845) M(846) M(847) \
    M(848) M(849) M(850) M(851) M(852) M(853) M(854) M(855) \
    M(856) M(857) M(858) M(859) M(860) M(861) M(862) M(863)
#else
#define AGG_LANE_GROUP_26(M)
#endif
#if AGG_LANES > 864
#define AGG_LANE_GROUP_27(M) \
    M(864) M(865) M(866) M(867) M(868) M(869) M(870) M(871) \
    M(872) M(873) M(874) M(875) M(876) M(877) M(878) M(879) \
    M(880) M(881) M(882) M(883) M(884) M(885) M(886) M(887) \
    M(888) M(889) M(890) M(891) M(892) M(893) M(894) M(895)
#else
#define AGG_LANE_GROUP_27(M)
#endif
#if AGG_LANES > 896
#define AGG_LANE_GROUP_28(M) \
    M(896) M(897) M(898) M(899) M(900) M(901) M(902) M(903) \
    M(904) M(905) M(906) M(907) M(908) M(909) M(910) M(911) \
    M(912) M(913) M(914) M(915) M(916) M(917) M(918) M(919) \
    M(920) M(921) M(922) M(923) M(924) M(925) M(926) M(927)
#else
#define AGG_LANE_GROUP_28(M)
#endif
#if AGG_LANES > 928
#define AGG_LANE_GROUP_29(M) \
    M(928) M(929) M(930) M(931) M(932) M(933) M(934) M(935) \
    M(936) M(937) M(938) M(939) M(940) M(941) M(942) M(943) \
    M(944) M(945) M(946) M(947) M(948) M(949) M(950) M(951) \
    M(952) M(953) M(954) M(955) M(956) M(957) M(958) M(959)
#else
#define AGG_LANE_GROUP_29(M)
#endif
#if AGG_LANES > 960
#define AGG_LANE_GROUP_30(M) \
    M(960) M(961) M(962) M(963) M(964) M(965) M(966) M(967) \
    M(968) M(969) M(970) M(971) M(972) M(973) M(974) M(975) \
    M(976) M(977) M(978) M(979) M(980) M(981) M(982) M(983) \
    M(984) M(985) M(986) M(987) M(988) M(989) M(990) M(991)
#else
#define AGG_LANE_GROUP_30(M)
#endif
#if AGG_LANES > 992
#define AGG_LANE_GROUP_31(M) \
    M(992) M(993) M(994) M(995) M(996) M(997) M(998) M(999) \
    M(1000) M(1001) M(1002) M(1003) M(1004) M(1005) M(1006) M(1007) \
    M(1008) M(1009) M(1010) M(1011) M(1012) M(1013) M(1014) M(1015) \
    M(1016) M(1017) M(1018) M(1019) M(1020) M(1021) M(1022) M(1023)
#else
#define AGG_LANE_GROUP_31(M)
#endif

/* Applies the macro M to every lane index 0..AGG_LANES-1. */
#define AGG_FOR_EACH_LANE(M) \
    AGG_LANE_GROUP_0(M) AGG_LANE_GROUP_1(M) AGG_LANE_GROUP_2(M) AGG_LANE_GROUP_3(M) \
    AGG_LANE_GROUP_4(M) AGG_LANE_GROUP_5(M) AGG_LANE_GROUP_6(M) AGG_LANE_GROUP_7(M) \
    AGG_LANE_GROUP_8(M) AGG_LANE_GROUP_9(M) AGG_LANE_GROUP_10(M) AGG_LANE_GROUP_11(M) \
    AGG_LANE_GROUP_12(M) AGG_LANE_GROUP_13(M) AGG_LANE_GROUP_14(M) AGG_LANE_GROUP_15(M) \
    AGG_LANE_GROUP_16(M) AGG_LANE_GROUP_17(M) AGG_LANE_GROUP_18(M) AGG_LANE_GROUP_19(M) \
    AGG_LANE_GROUP_20(M) AGG_LANE_GROUP_21(M) AGG_LANE_GROUP_22(M) AGG_LANE_GROUP_23(M) \
    AGG_LANE_GROUP_24(M) AGG_LANE_GROUP_25(M) AGG_LANE_GROUP_26(M) AGG_LANE_GROUP_27(M) \
    AGG_LANE_GROUP_28(M) AGG_LANE_GROUP_29(M) AGG_LANE_GROUP_30(M) AGG_LANE_GROUP_31(M)

/* Flags (agg_t.flags). */
const bit<8> AGG_FLAG_RESULT     = 0x01;  /* set by the switch: the lanes are the sum */
const bit<8> AGG_FLAG_RETRANSMIT = 0x02;  /* set by a worker on a resent contribution */
const bit<8> AGG_FLAG_RESENT     = 0x04;  /* set by the switch: a result unicast again */

/* Largest number of workers per job: one bit each in a slot's bitmap. */
const bit<32> AGG_MAX_WORKERS = 32;

#define AGG_LANE_FIELD(i) bit<32> lane##i;

header agg_t {
    bit<8>  version;     /* AGG_VERSION */
    bit<8>  flags;       /* AGG_FLAG_* */
    bit<16> job_id;      /* selects the job's slot range (agg_jobs table) */
    bit<16> slot;        /* slot index inside the job's range, 0..size-1 */
    bit<1>  pool;        /* which of the slot's two shadow copies */
    bit<7>  reserved;    /* 0 */
    bit<8>  worker_id;   /* 0..workers-1 in a contribution; the receiver in a result */
    bit<32> block;       /* opaque to the switch: echoed in the result */
    bit<16> exponent;    /* int16, two's complement: the switch keeps the maximum */
    bit<16> lane_count;  /* AGG_LANES; packets with another count are malformed */
    AGG_FOR_EACH_LANE(AGG_LANE_FIELD)   /* bit<32> lane0; .. lane<K-1>; */
}

#endif  /* NETWEFT_AGGREGATION_HEADERS_P4 */
