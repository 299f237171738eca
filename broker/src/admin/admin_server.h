#pragma once

#include <boost/asio/io_context.hpp>

#include "admin/http_server.h"
#include "admin/routes.h"

namespace ferry::admin {

// The HTTP admin API: GET routes (routes.h) over an http_server; request bodies are read (capped) and ignored.
class admin_server : public http_server {
 public:
  admin_server(boost::asio::io_context& io, admin_sources sources, admin_access access = {});
};

}  // namespace ferry::admin
