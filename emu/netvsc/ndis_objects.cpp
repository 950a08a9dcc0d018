// SPDX-License-Identifier: BSD-3-Clause
// NDIS objects (doc/hardware.md §11.6): what the host can offload, its RSS capabilities, and the
// guest's RSS parameters.
#include <algorithm>
#include <cstring>

#include "device/tso.h"
#include "netvsc/ndis_format.h"
#include "netvsc/netvsp_state.h"
#include "netvsc/nvsp_format.h"
#include "netvsc/rndis_format.h"

namespace mana::emu::netvsc {

std::vector<uint8_t> offload_capabilities(const NetvspHost::State& s, uint32_t asked_len) {
  using namespace ndis;
  Offload o{};
  o.hdr.type = kObjOffload;
  // Revision 3 (156 bytes) for NDIS 6.30, revision 2 (up to the RSC part) before: the size DPDK
  // asks for each (hn_rndis_query_hwcaps).
  const bool v630 = s.ndis_major > 6 || (s.ndis_major == 6 && s.ndis_minor >= 30);
  o.hdr.rev = v630 ? kOffloadRev3 : 2;
  o.hdr.size = v630 ? sizeof(Offload) : offsetof(Offload, rsc);
  // Checksums in both directions, IPv4 and IPv6 with options/extension headers, and LSOv2: what
  // the emulator computes (emu/device/offloads.h, tso.h).
  o.csum.ip4_txenc = o.csum.ip4_rxenc = o.csum.ip6_txenc = o.csum.ip6_rxenc = kEncap8023;
  o.csum.ip4_txcsum = o.csum.ip4_rxcsum =
      kTxCsumIp4 | kTxCsumIp4Opt | kTxCsumTcp4 | kTxCsumTcp4Opt | kTxCsumUdp4;
  o.csum.ip6_txcsum = o.csum.ip6_rxcsum =
      kTxCsumIp6Ext | kTxCsumTcp6 | kTxCsumTcp6Opt | kTxCsumUdp6;
  o.lsov2.ip4_encap = o.lsov2.ip6_encap = kEncap8023;
  o.lsov2.ip4_maxsz = o.lsov2.ip6_maxsz = kMaxTsoPacket - 1;
  o.lsov2.ip4_minsg = o.lsov2.ip6_minsg = 2;
  o.lsov2.ip6_opts = kLsoV2Ip6Ext | kLsoV2Tcp6Opt;
  const uint32_t n = std::min<uint32_t>(o.hdr.size, asked_len);
  const auto* p = reinterpret_cast<const uint8_t*>(&o);
  return {p, p + n};
}

std::vector<uint8_t> rss_capabilities(const NetvspHost::State& s, uint32_t asked_len) {
  using namespace ndis;
  // OpenVMM's answer: TCP/IPv4 and TCP/IPv6 hashing with Toeplitz, one interrupt message, 128
  // table entries ("DPDK gets confused if the table size is zero").
  RssCaps c{};
  c.hdr = {kObjRssCaps, 2, kRssCapsSizeRev2};
  c.caps = kRssCapIpv4 | kRssCapIpv6 | kHashFunctionToeplitz;
  c.nmsi = 1;
  c.nrxr = s.config.max_queues;
  c.nind = kMaxIndirection;
  const uint32_t n = std::min<uint32_t>(kRssCapsSizeRev2, asked_len);
  const auto* p = reinterpret_cast<const uint8_t*>(&c);
  return {p, p + n};
}

uint32_t set_rss_parameters(NetvspHost::State& s, std::span<const uint8_t> info) {
  using namespace ndis;
  RssParams prm{};
  if (info.size() < kRssParamsSizeRev1) return rndis::kStatusInvalidLength;
  std::memcpy(&prm, info.data(), std::min(info.size(), sizeof(prm)));
  // Like vmswitch (per OpenVMM), the object header is not checked.
  if ((prm.flags & kRssFlagDisable) || (prm.hash & kHashFunctionMask) == 0) {
    s.rss.enabled = false;
    return rndis::kStatusSuccess;
  }
  const uint32_t entries = prm.indsize / 4;
  if (prm.keysize != kToeplitzKeySize || prm.indsize % 4 != 0 || entries == 0 ||
      uint64_t{prm.keyoffset} + kToeplitzKeySize > info.size() ||
      uint64_t{prm.indoffset} + std::min(entries, kMaxIndirection) * 4 > info.size())
    return rndis::kStatusInvalidData;
  std::array<uint32_t, kMaxIndirection> table{};
  const uint32_t n = std::min(entries, kMaxIndirection);
  std::memcpy(table.data(), info.data() + prm.indoffset, n * 4);
  for (uint32_t i = 0; i < n; ++i)
    if (table[i] >= s.config.max_queues) return rndis::kStatusInvalidData;
  s.rss.table = table;
  s.rss.table_size = n;
  s.rss.hash_types = prm.hash & ~kHashFunctionMask;
  s.rss.hasher = std::make_unique<RssHasher>(info.data() + prm.keyoffset);
  s.rss.enabled = true;
  return rndis::kStatusSuccess;
}

}  // namespace mana::emu::netvsc
