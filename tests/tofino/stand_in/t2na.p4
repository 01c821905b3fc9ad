/* Stand-in for Tofino 2's t2na.p4 (see tna.p4 here): the names the p4/t2na/
 * programs use are TNA's; what Tofino 2 adds (a RegisterAction's second output,
 * rv2) is declared there too, since netweft's front end checks types, not targets. */
#include "tna.p4"
