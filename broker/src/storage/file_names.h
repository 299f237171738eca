#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/ids.h"

namespace ferry::storage {

// Every file in a partition directory is named by an offset, zero-padded to 20 digits so that `ls` lists
// them in offset order, followed by one of these suffixes.
inline constexpr std::string_view log_suffix = ".log";               // a segment's batches (segment.h)
inline constexpr std::string_view index_suffix = ".index";           // offset_index.h
inline constexpr std::string_view time_index_suffix = ".timeindex";  // time_index.h
inline constexpr std::string_view snapshot_suffix = ".snapshot";     // producer_state.h
// Appended to a segment file's name when retention removes it; the file is deleted file.delete.delay.ms later
// (and at startup, if the broker stopped before that).
inline constexpr std::string_view deleted_suffix = ".deleted";

// "00000000000000001234.log" for offset 1234 and suffix ".log".
[[nodiscard]] std::string offset_file_name(offset o, std::string_view suffix);

// The offset of a name offset_file_name would produce with this suffix; nullopt for any other name.
[[nodiscard]] std::optional<offset> parse_offset_file_name(std::string_view name, std::string_view suffix);

}  // namespace ferry::storage
