// SPDX-License-Identifier: BSD-3-Clause
// Parsing and formatting of the small values the emulator's config and command line share:
// MAC addresses, PCI addresses, wire specs, numbers and on/off flags.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mana::emu {

using MacAddress = std::array<uint8_t, 6>;
using Ipv4Address = std::array<uint8_t, 4>;

// "aa:bb:cc:dd:ee:ff" (either case, exactly two hex digits per byte).
bool parse_mac(std::string_view text, MacAddress* out);
// Lower-case "aa:bb:cc:dd:ee:ff", as Linux shows it in sysfs.
std::string format_mac(const MacAddress& mac);

// Dotted-quad "A.B.C.D" (decimal 0..255, no leading '+', at most 3 digits per part).
bool parse_ipv4(std::string_view text, Ipv4Address* out);
std::string format_ipv4(const Ipv4Address& ip);

// "dddd:bb:dd.f" (hex; device <= 0x1f, function <= 7). `canonical` gets the lower-case form.
bool parse_pci_addr(std::string_view text, std::string* canonical);

// loop | pair | null | tap:<ifname> | shm:<name> | fabric:<name>. `error` says what is wrong.
bool check_wire_spec(std::string_view spec, std::string* error);

// Decimal unsigned number without sign or spaces, at most `max`.
bool parse_uint(std::string_view text, uint32_t max, uint32_t* out);

// "0"/"1" as in the config file.
bool parse_bit(std::string_view text, bool* out);

// The words of a line separated by spaces, tabs or carriage returns (views into `line`).
std::vector<std::string_view> split_words(std::string_view line);

// `text` in single quotes for an error line: bytes that are not printable ASCII as \xNN, and
// text longer than 64 characters cut ("...'") with its length, so that an error stays one
// readable line whatever the input.
std::string quote_for_error(std::string_view text);

// True when `text` holds no whitespace, '#' or '=' and is not empty: safe as a config value.
bool is_plain_value(std::string_view text);

}  // namespace mana::emu
