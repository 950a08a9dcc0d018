// SPDX-License-Identifier: BSD-3-Clause
#include "control/control_command_format.h"

namespace mana::emu {

std::string format_control_command(const ControlCommand& c) {
  const std::string vf = std::to_string(c.vf);
  const std::string vf_port = vf + " " + std::to_string(c.port);
  switch (c.kind) {
    case ControlCommand::Kind::kNetdev:
      return "netdev " + vf_port + (c.up ? " up" : " down");
    case ControlCommand::Kind::kLink:
      return "link " + vf + (c.up ? " up" : " down");
    case ControlCommand::Kind::kRename:
      return "rename " + vf_port + " " + c.ifname;
    case ControlCommand::Kind::kRemove:
      return "remove " + vf;
    case ControlCommand::Kind::kAdd:
      return "add " + vf +
             (c.add_stage == ControlCommand::AddStage::kNetdev ? " netdev"
              : c.add_stage == ControlCommand::AddStage::kRdma ? " rdma"
                                                               : "");
    case ControlCommand::Kind::kCounters:
      return "counters " + vf;
    case ControlCommand::Kind::kLive:
      return "live " + vf;
    case ControlCommand::Kind::kNetvscCounters:
      return "netvsc-counters " + vf_port;
    case ControlCommand::Kind::kFault:
      break;
  }
  const Fault& f = c.fault;
  std::string line = "fault " + vf_port + (f.tx ? " tx" : " rx");
  if (f.kind == Fault::Kind::kBadLkey) return line + " bad-lkey " + std::to_string(f.count);
  if (f.kind == Fault::Kind::kStall) return line + " stall";
  return line + " error-cqe " + std::to_string(f.cqe_type) + " " + std::to_string(f.count) +
         " skip " + std::to_string(f.skip) + " every " + std::to_string(f.every);
}

}  // namespace mana::emu
