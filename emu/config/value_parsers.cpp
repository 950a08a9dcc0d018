// SPDX-License-Identifier: BSD-3-Clause
#include "config/value_parsers.h"

#include <cstdio>

namespace mana::emu {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Exactly `digits` hex digits at `text[pos...]`.
bool parse_hex_field(std::string_view text, size_t pos, size_t digits, uint32_t* out) {
  if (pos + digits > text.size()) return false;
  uint32_t value = 0;
  for (size_t i = 0; i < digits; ++i) {
    int d = hex_digit(text[pos + i]);
    if (d < 0) return false;
    value = value * 16 + static_cast<uint32_t>(d);
  }
  *out = value;
  return true;
}

// Linux interface names: 1..15 characters, no '/', ':' or whitespace.
bool is_valid_ifname(std::string_view name) {
  if (name.empty() || name.size() > 15) return false;
  for (char c : name) {
    if (c == '/' || c == ':' || c <= ' ' || c == '#' || c == '=') return false;
  }
  return true;
}

}  // namespace

bool parse_mac(std::string_view text, MacAddress* out) {
  if (text.size() != 17) return false;
  MacAddress mac{};
  for (size_t i = 0; i < mac.size(); ++i) {
    uint32_t byte = 0;
    if (!parse_hex_field(text, i * 3, 2, &byte)) return false;
    if (i + 1 < mac.size() && text[i * 3 + 2] != ':') return false;
    mac[i] = static_cast<uint8_t>(byte);
  }
  *out = mac;
  return true;
}

std::string format_mac(const MacAddress& mac) {
  char buf[18];
  std::snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
                mac[4], mac[5]);
  return buf;
}

bool parse_ipv4(std::string_view text, Ipv4Address* out) {
  Ipv4Address ip{};
  size_t pos = 0;
  for (size_t i = 0; i < ip.size(); ++i) {
    if (i > 0) {
      if (pos >= text.size() || text[pos] != '.') return false;
      ++pos;
    }
    const size_t start = pos;
    while (pos < text.size() && pos - start < 4 && text[pos] >= '0' && text[pos] <= '9') ++pos;
    uint32_t part = 0;
    if (pos - start > 3 || !parse_uint(text.substr(start, pos - start), 255, &part)) return false;
    ip[i] = static_cast<uint8_t>(part);
  }
  if (pos != text.size()) return false;
  *out = ip;
  return true;
}

std::string format_ipv4(const Ipv4Address& ip) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%u.%u.%u.%u", ip[0], ip[1], ip[2], ip[3]);
  return buf;
}

bool parse_pci_addr(std::string_view text, std::string* canonical) {
  uint32_t domain = 0, bus = 0, dev = 0, fn = 0;
  if (text.size() != 12 || text[4] != ':' || text[7] != ':' || text[10] != '.') return false;
  if (!parse_hex_field(text, 0, 4, &domain) || !parse_hex_field(text, 5, 2, &bus) ||
      !parse_hex_field(text, 8, 2, &dev) || !parse_hex_field(text, 11, 1, &fn)) {
    return false;
  }
  if (dev > 0x1f || fn > 7) return false;
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%04x:%02x:%02x.%x", domain, bus, dev, fn);
  *canonical = buf;
  return true;
}

bool check_wire_spec(std::string_view spec, std::string* error) {
  if (spec == "loop" || spec == "pair" || spec == "null") return true;
  if (spec.starts_with("tap:")) {
    if (is_valid_ifname(spec.substr(4))) return true;
    *error = "wire '" + std::string(spec) + "': tap needs an interface name of 1..15 characters";
    return false;
  }
  if (spec.starts_with("shm:")) {
    std::string_view name = spec.substr(4);
    bool ok = !name.empty() && name.size() <= 200 && is_plain_value(name) &&
              name.find('/') == std::string_view::npos;
    if (ok) return true;
    *error = "wire '" + std::string(spec) + "': shm needs a name without '/' or spaces";
    return false;
  }
  if (spec.starts_with("fabric:")) {
    std::string_view name = spec.substr(7);
    bool ok = !name.empty() && name.size() <= 200 && is_plain_value(name) &&
              name.find('/') == std::string_view::npos;
    if (ok) return true;
    *error = "wire '" + std::string(spec) + "': fabric needs a name without '/' or spaces";
    return false;
  }
  *error = "unknown wire '" + std::string(spec) +
           "' (loop, pair, null, tap:<ifname>, shm:<name>, fabric:<name>)";
  return false;
}

bool parse_uint(std::string_view text, uint32_t max, uint32_t* out) {
  if (text.empty() || text.size() > 10) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value > max) return false;
  *out = static_cast<uint32_t>(value);
  return true;
}

bool parse_bit(std::string_view text, bool* out) {
  if (text == "0" || text == "1") {
    *out = text == "1";
    return true;
  }
  return false;
}

std::vector<std::string_view> split_words(std::string_view line) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && blank(line[i])) ++i;
    size_t start = i;
    while (i < line.size() && !blank(line[i])) ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

std::string quote_for_error(std::string_view text) {
  constexpr size_t kMaxShown = 64;
  static const char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (text.size() > kMaxShown) return out + "...' (" + std::to_string(text.size()) + " characters)";
  return out + "'";
}

bool is_plain_value(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c <= ' ' || c == '#' || c == '=' || c == 0x7f) return false;
  }
  return true;
}

}  // namespace mana::emu
