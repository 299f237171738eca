#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "coord/zk_session.h"

namespace ferry::app {

// The ZooKeeper session of this broker's last run, kept in its first log dir so that a broker restarted after
// a crash (SIGKILL, OOM kill) takes the still-live session over instead of waiting up to
// zookeeper.session.timeout.ms for it to expire before it can register again. The log dir's lock guarantees
// that only one process ever uses the file.
//
// Format (text, mode 0600, replaced atomically):
//   ferry-zookeeper-session 1
//   <zookeeper.connect>
//   <session id, hex>
//   <password, 32 hex digits>
inline constexpr std::string_view session_file_name = ".ferry-zookeeper-session";

// The session saved for `connect`; nullopt when there is none, it is unreadable, or it was for another
// ZooKeeper ensemble or chroot.
[[nodiscard]] std::optional<coord::zk_session::credentials> read_session_file(const std::filesystem::path& path,
                                                                              std::string_view connect);
// Saves the session; failures are logged (the next restart just waits for the old session to expire).
void write_session_file(const std::filesystem::path& path, std::string_view connect,
                        const coord::zk_session::credentials& session);

}  // namespace ferry::app
