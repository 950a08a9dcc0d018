// SPDX-License-Identifier: BSD-3-Clause
#include "config/hw_options.h"

#include <cerrno>

#include "config/config.h"
#include "config/value_parsers.h"

namespace mana::emu {

namespace {

// One key: its values as text, and how each maps onto the behaviour.
struct HwOption {
  std::string_view key;
  std::string_view values;  // for errors and help
  bool (*set)(std::string_view value, HwBehaviour* hw);
  std::string (*get)(const HwBehaviour& hw);
};

bool on_off(std::string_view value, bool* out) {
  if (value != "on" && value != "off") return false;
  *out = value == "on";
  return true;
}
std::string on_off(bool v) { return v ? "on" : "off"; }

constexpr uint32_t kMaxAdapterMtu = 9000;
constexpr uint32_t kMaxLinkSpeedMbps = 800000;  // RTE_ETH_SPEED_NUM_800G
constexpr uint32_t kMaxNetdevDelayMs = 600000;
constexpr uint32_t kMaxNetdevRenameMs = 60000;
constexpr uint32_t kMaxFatalEventDelayMs = 10000;

bool number(std::string_view value, uint32_t max, uint32_t* out) {
  return parse_uint(value, max, out);
}

constexpr HwOption kOptions[] = {
    {"raw-qp-first", "on|off",
     [](std::string_view v, HwBehaviour* hw) { return on_off(v, &hw->raw_qp_first); },
     [](const HwBehaviour& hw) { return on_off(hw.raw_qp_first); }},
    {"ipv6-ip-csum", "on|off",
     [](std::string_view v, HwBehaviour* hw) { return on_off(v, &hw->ipv6_ip_csum); },
     [](const HwBehaviour& hw) { return on_off(hw.ipv6_ip_csum); }},
    {"hash-type", "bit|mask",
     [](std::string_view v, HwBehaviour* hw) {
       if (v != "bit" && v != "mask") return false;
       hw->hash_type = v == "mask" ? HwBehaviour::HashType::kMask : HwBehaviour::HashType::kOneBit;
       return true;
     },
     [](const HwBehaviour& hw) {
       return std::string(hw.hash_type == HwBehaviour::HashType::kMask ? "mask" : "bit");
     }},
    {"zero-length-cqe", "N (every Nth RX completion, 0: never)",
     [](std::string_view v, HwBehaviour* hw) {
       return number(v, 1u << 20, &hw->zero_length_cqe_every);
     },
     [](const HwBehaviour& hw) { return std::to_string(hw.zero_length_cqe_every); }},
    {"cq-doorbell", "off|stall|error",
     [](std::string_view v, HwBehaviour* hw) {
       using R = HwBehaviour::CqDoorbellRule;
       if (v == "off")
         hw->cq_doorbell = R::kOff;
       else if (v == "stall")
         hw->cq_doorbell = R::kStall;
       else if (v == "error")
         hw->cq_doorbell = R::kError;
       else
         return false;
       return true;
     },
     [](const HwBehaviour& hw) {
       using R = HwBehaviour::CqDoorbellRule;
       return std::string(hw.cq_doorbell == R::kOff     ? "off"
                          : hw.cq_doorbell == R::kStall ? "stall"
                                                        : "error");
     }},
    {"vport-offset", "N (0..4000, 0: small and chosen per run)",
     [](std::string_view v, HwBehaviour* hw) { return number(v, 4000, &hw->vport_offset); },
     [](const HwBehaviour& hw) { return std::to_string(hw.vport_offset); }},
    {"libmana-max-wr", "N (0: no limit of its own)",
     [](std::string_view v, HwBehaviour* hw) { return number(v, 1u << 24, &hw->libmana_max_wr); },
     [](const HwBehaviour& hw) { return std::to_string(hw.libmana_max_wr); }},
    {"vport-busy", "enodev|ebusy",
     [](std::string_view v, HwBehaviour* hw) {
       if (v != "enodev" && v != "ebusy") return false;
       hw->vport_busy_errno = v == "ebusy" ? EBUSY : ENODEV;
       return true;
     },
     [](const HwBehaviour& hw) {
       return std::string(hw.vport_busy_errno == EBUSY ? "ebusy" : "enodev");
     }},
    {"cq-eq", "on|off", [](std::string_view v, HwBehaviour* hw) { return on_off(v, &hw->cq_eq); },
     [](const HwBehaviour& hw) { return on_off(hw.cq_eq); }},
    {"rx-oversize", "drop|truncate|deliver",
     [](std::string_view v, HwBehaviour* hw) {
       using O = HwBehaviour::RxOversize;
       if (v == "drop")
         hw->rx_oversize = O::kDrop;
       else if (v == "truncate")
         hw->rx_oversize = O::kTruncate;
       else if (v == "deliver")
         hw->rx_oversize = O::kDeliver;
       else
         return false;
       return true;
     },
     [](const HwBehaviour& hw) {
       using O = HwBehaviour::RxOversize;
       return std::string(hw.rx_oversize == O::kDrop       ? "drop"
                          : hw.rx_oversize == O::kTruncate ? "truncate"
                                                           : "deliver");
     }},
    {"single-queue-hash", "on|off",
     [](std::string_view v, HwBehaviour* hw) { return on_off(v, &hw->single_queue_hash); },
     [](const HwBehaviour& hw) { return on_off(hw.single_queue_hash); }},
    {"tx-wqe-offset", "bu|bytes",
     [](std::string_view v, HwBehaviour* hw) {
       using U = HwBehaviour::TxWqeOffset;
       if (v != "bu" && v != "bytes") return false;
       hw->tx_wqe_offset = v == "bytes" ? U::kBytes : U::kBasicUnits;
       return true;
     },
     [](const HwBehaviour& hw) {
       return std::string(hw.tx_wqe_offset == HwBehaviour::TxWqeOffset::kBytes ? "bytes" : "bu");
     }},
    {"adapter-mtu", "N (1500..9000: the netdevs' max MTU)",
     [](std::string_view v, HwBehaviour* hw) {
       return number(v, kMaxAdapterMtu, &hw->adapter_mtu) && hw->adapter_mtu >= 1500;
     },
     [](const HwBehaviour& hw) { return std::to_string(hw.adapter_mtu); }},
    {"vport-mtu", "netdev|adapter",
     [](std::string_view v, HwBehaviour* hw) {
       if (v != "netdev" && v != "adapter") return false;
       hw->vport_mtu_adapter = v == "adapter";
       return true;
     },
     [](const HwBehaviour& hw) {
       return std::string(hw.vport_mtu_adapter ? "adapter" : "netdev");
     }},
    {"tso-ip-id", "increment|fixed",
     [](std::string_view v, HwBehaviour* hw) {
       if (v != "increment" && v != "fixed") return false;
       hw->tso_fixed_ip_id = v == "fixed";
       return true;
     },
     [](const HwBehaviour& hw) { return std::string(hw.tso_fixed_ip_id ? "fixed" : "increment"); }},
    {"tx-vlan-into-tagged", "refuse|insert",
     [](std::string_view v, HwBehaviour* hw) {
       if (v != "refuse" && v != "insert") return false;
       hw->tx_vlan_refuse_tagged = v == "refuse";
       return true;
     },
     [](const HwBehaviour& hw) {
       return std::string(hw.tx_vlan_refuse_tagged ? "refuse" : "insert");
     }},
    {"netvsc-datapath-completion", "as-requested|never|always",
     [](std::string_view v, HwBehaviour* hw) {
       using C = HwBehaviour::NetvscCompletion;
       if (v == "as-requested")
         hw->netvsc_datapath_completion = C::kAsRequested;
       else if (v == "never")
         hw->netvsc_datapath_completion = C::kNever;
       else if (v == "always")
         hw->netvsc_datapath_completion = C::kAlways;
       else
         return false;
       return true;
     },
     [](const HwBehaviour& hw) {
       using C = HwBehaviour::NetvscCompletion;
       return std::string(hw.netvsc_datapath_completion == C::kAsRequested ? "as-requested"
                          : hw.netvsc_datapath_completion == C::kNever     ? "never"
                                                                           : "always");
     }},
    {"netvsc-vfassoc", "rndis-init|packet-filter",
     [](std::string_view v, HwBehaviour* hw) {
       if (v != "rndis-init" && v != "packet-filter") return false;
       hw->netvsc_vfassoc_at_filter = v == "packet-filter";
       return true;
     },
     [](const HwBehaviour& hw) {
       return std::string(hw.netvsc_vfassoc_at_filter ? "packet-filter" : "rndis-init");
     }},
    {"netvsc-group-frames", "synthetic|vf",
     [](std::string_view v, HwBehaviour* hw) {
       if (v != "synthetic" && v != "vf") return false;
       hw->netvsc_group_frames_vf = v == "vf";
       return true;
     },
     [](const HwBehaviour& hw) {
       return std::string(hw.netvsc_group_frames_vf ? "vf" : "synthetic");
     }},
    // ---- libmana CQ rules and RX steering teardown (doc/hardware.md §9.21, §9.22)
    {"libmana-cq-rule", "v44|v53|v62",
     [](std::string_view v, HwBehaviour* hw) {
       using R = HwBehaviour::LibmanaCqRule;
       if (v == "v44")
         hw->libmana_cq_rule = R::kV44;
       else if (v == "v53")
         hw->libmana_cq_rule = R::kV53;
       else if (v == "v62")
         hw->libmana_cq_rule = R::kV62;
       else
         return false;
       return true;
     },
     [](const HwBehaviour& hw) {
       using R = HwBehaviour::LibmanaCqRule;
       return std::string(hw.libmana_cq_rule == R::kV44   ? "v44"
                          : hw.libmana_cq_rule == R::kV53 ? "v53"
                                                          : "v62");
     }},
    {"rx-steering-on-destroy", "keep|clear",
     [](std::string_view v, HwBehaviour* hw) {
       if (v != "keep" && v != "clear") return false;
       hw->rx_steering_keep = v == "keep";
       return true;
     },
     [](const HwBehaviour& hw) { return std::string(hw.rx_steering_keep ? "keep" : "clear"); }},
    // ---- the port's link (doc/hardware.md §9.24) ----
    {"link-speed-mbps", "N (1..800000 Mbit/s) or -1 (unknown)",
     [](std::string_view v, HwBehaviour* hw) {
       if (v == "-1") {
         hw->link_speed_mbps = -1;
         return true;
       }
       uint32_t n = 0;
       if (!number(v, kMaxLinkSpeedMbps, &n) || n == 0) return false;
       hw->link_speed_mbps = static_cast<int32_t>(n);
       return true;
     },
     [](const HwBehaviour& hw) { return std::to_string(hw.link_speed_mbps); }},
    {"link-events", "on|off",
     [](std::string_view v, HwBehaviour* hw) { return on_off(v, &hw->link_events); },
     [](const HwBehaviour& hw) { return on_off(hw.link_events); }},
    // ---- a hot-added VF's netdev (doc/hardware.md §9.25) ----
    {"netdev-delay-ms", "N (0..600000 ms after the PCI function, on add)",
     [](std::string_view v, HwBehaviour* hw) {
       return number(v, kMaxNetdevDelayMs, &hw->netdev_delay_ms);
     },
     [](const HwBehaviour& hw) { return std::to_string(hw.netdev_delay_ms); }},
    {"netdev-rename-ms", "N (0..60000 ms under eth<k> before its name, on add; 0: no rename)",
     [](std::string_view v, HwBehaviour* hw) {
       return number(v, kMaxNetdevRenameMs, &hw->netdev_rename_ms);
     },
     [](const HwBehaviour& hw) { return std::to_string(hw.netdev_rename_ms); }},
    // ---- a removal's fatal event (doc/hardware.md §2.7) ----
    {"fatal-event-delay-ms", "N (0..10000 ms after the disassociation, on remove)",
     [](std::string_view v, HwBehaviour* hw) {
       return number(v, kMaxFatalEventDelayMs, &hw->fatal_event_delay_ms);
     },
     [](const HwBehaviour& hw) { return std::to_string(hw.fatal_event_delay_ms); }},
};

std::string keys() {
  std::string all;
  for (const HwOption& o : kOptions) all += (all.empty() ? "" : ", ") + std::string(o.key);
  return all;
}

}  // namespace

bool set_hw_option(std::string_view key_value, HwBehaviour* hw, std::string* error) {
  const size_t eq = key_value.find('=');
  const std::string_view key = key_value.substr(0, eq);
  for (const HwOption& o : kOptions) {
    if (o.key != key) continue;
    if (eq == std::string_view::npos || !o.set(key_value.substr(eq + 1), hw)) {
      *error = "hw " + quote_for_error(key_value) + ": expected " + std::string(key) + "=" +
               std::string(o.values);
      return false;
    }
    return true;
  }
  *error = "hw " + quote_for_error(key_value) + ": unknown behaviour " + quote_for_error(key) +
           " (known: " + keys() + ")";
  return false;
}

std::vector<std::string> format_hw_options(const HwBehaviour& hw) {
  std::vector<std::string> words;
  for (const HwOption& o : kOptions) words.push_back(std::string(o.key) + "=" + o.get(hw));
  return words;
}

std::string profile_names() { return "default, azure-2023, azure-2025, azure-2026, strict"; }

bool apply_profile(std::string_view name, EmuConfig* config, bool* coalesce, std::string* error) {
  HwBehaviour hw;
  if (name == "default") {
    config->limits = EmuConfig::kLimits6_2;
    config->device_split = false;
    *coalesce = false;
  } else if (name == "azure-2023") {
    // A 6.2..6.4 kernel with rdma-core 44: 256 WR/CQE, no coalescing, no device split, raw CQs
    // without an EQ, ENODEV for a busy vPort, no raw-QP-first rule yet.
    config->limits = EmuConfig::kLimits6_2;
    config->device_split = false;
    *coalesce = false;
    hw.raw_qp_first = false;
    hw.cq_eq = false;
    hw.vport_busy_errno = ENODEV;
    hw.adapter_mtu = 1500;    // jumbo frames came with Linux 6.4
    hw.link_speed_mbps = -1;  // no link speed before Linux 6.17
    hw.link_events = false;   // no NIC link events before Linux 6.19
  } else if (name == "azure-2025" || name == "azure-2026" || name == "strict") {
    // A 2025 kernel (device split, 2048 WR/CQE, coalescing, EBUSY) under Debian 12's rdma-core 44.
    config->limits = EmuConfig::kLimits2025;
    config->device_split = true;
    *coalesce = true;
    hw.raw_qp_first = true;
    hw.vport_busy_errno = EBUSY;
    hw.link_speed_mbps = -1;  // no link speed before Linux 6.17
    hw.link_events = false;   // no NIC link events before Linux 6.19
    if (name == "azure-2026") {
      // A mid-2026 image (doc/hardware.md §9.21, §9.22, §9.24): the RX steering fix (7.0.4, 7.1,
      // 6.12.86, 6.6.140) and the VM's bandwidth as the link speed (6.17), under rdma-core >= 62
      // (no 256 limit, cq_id invalid until a QP uses it).
      hw.libmana_max_wr = 0;
      hw.libmana_cq_rule = HwBehaviour::LibmanaCqRule::kV62;
      hw.rx_steering_keep = false;
      hw.link_speed_mbps = HwBehaviour{}.link_speed_mbps;
      hw.link_events = true;  // Linux 6.19
    }
    if (name == "strict") {
      // Every alternative that is hardest on a driver, at once.
      hw.ipv6_ip_csum = true;
      hw.hash_type = HwBehaviour::HashType::kMask;
      hw.zero_length_cqe_every = 7;
      hw.cq_doorbell = HwBehaviour::CqDoorbellRule::kError;
      hw.vport_offset = 300;
      hw.rx_oversize = HwBehaviour::RxOversize::kTruncate;
      hw.single_queue_hash = false;
      hw.tx_wqe_offset = HwBehaviour::TxWqeOffset::kBytes;
    }
  } else {
    *error = "unknown profile " + quote_for_error(name) + " (known: " + profile_names() + ")";
    return false;
  }
  config->hw = hw;
  return true;
}

}  // namespace mana::emu
