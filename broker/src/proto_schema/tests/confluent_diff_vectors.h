#pragma once

// Old/new schema pairs and the differences Confluent's SchemaDiff finds between them, transcribed from
// protobuf-provider's test resources (diff-schema-examples.json): only the incompatible differences are kept,
// since only those are reported.

#include <vector>

#include "schema/schema_format.h"

namespace ferry::proto_schema::testing {

struct diff_vector {
  const char* description;
  const char* original;
  const char* update;
  std::vector<schema::named_schema> original_references;
  std::vector<schema::named_schema> update_references;
  std::vector<const char*> incompatible;  // "TYPE #/path"
};

inline const std::vector<diff_vector>& confluent_diff_vectors() {
  static const std::vector<diff_vector> vectors = {
      {"Allow addition of un-reserved property",
       "syntax = \"proto3\";\npackage foo;\nmessage TestMessage {\n    string test_string = 1;\n    "
       ".foo.TestMessage.Status test_int = 2;\n    message Status {\n    string test_string = 1;\n    }\n}",
       "syntax = \"proto3\";\npackage foo;\n\nmessage TestMessage {\n  string test_string = 1;\n  "
       ".foo.TestMessage.Status test_int = 2;\n  float test_float = 3;\n\n  message Status {\n    string test_string = "
       "1;\n  }\n}\n",
       {},
       {},
       {}},
      {"Detect package change",
       "syntax = \"proto3\";\npackage foo;\nmessage TestMessage {\n    string test_string = 1;\n    "
       ".foo.TestMessage.Status test_int = 2;\n    message Status {\n    string test_string = 1;\n    }\n}",
       "syntax = \"proto3\";\npackage bar;\nmessage TestMessage {\n    string test_string = 1;\n    "
       ".bar.TestMessage.Status test_int = 2;\n    message Status {\n    string test_string = 1;\n    }\n}",
       {},
       {},
       {"PACKAGE_CHANGED #/"}},
      {"Detect change to name qualification",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    Status test_int = 2;\n    "
       "message Status {\n    string test_string = 1;\n    }\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    .TestMessage.Status test_int = "
       "2;\n    message Status {\n    string test_string = 1;\n    }\n}",
       {},
       {},
       {}},
      {"Detect change to name qualification with package",
       "syntax = \"proto3\";\npackage foo;\nmessage TestMessage {\n    string test_string = 1;\n    Status test_int = "
       "2;\n    message Status {\n    string test_string = 1;\n    }\n}",
       "syntax = \"proto3\";\npackage foo;\nmessage TestMessage {\n    string test_string = 1;\n    "
       ".foo.TestMessage.Status test_int = 2;\n    message Status {\n    string test_string = 1;\n    }\n}",
       {},
       {},
       {}},
      {"Detect added field",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    string test_string2 = 2;\n}",
       {},
       {},
       {}},
      {"Detect added required field",
       "syntax = \"proto2\";\nmessage TestMessage {\n    optional string test_string = 1;\n}",
       "syntax = \"proto2\";\nmessage TestMessage {\n    optional string test_string = 1;\n    required string "
       "test_string2 = 2;\n}",
       {},
       {},
       {"REQUIRED_FIELD_ADDED #/TestMessage/2"}},
      {"Detect added field to nested type",
       "syntax = \"proto3\";\nmessage Wrapper {\n    int32 wrapperInt = 1;\n    message TestMessage {\n    string "
       "test_string = 1;\n}\n}",
       "syntax = \"proto3\";\nmessage Wrapper {\n    int32 wrapperInt = 1;\n    message TestMessage {\n    string "
       "test_string = 1;\n    string test_string2 = 2;\n}\n}",
       {},
       {},
       {}},
      {"Detect removed field",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    string test_string2 = 2;\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n}\n",
       {},
       {},
       {}},
      {"Detect removed required field",
       "syntax = \"proto2\";\nmessage TestMessage {\n    optional string test_string = 1;\n    required string "
       "test_string2 = 2;\n}",
       "syntax = \"proto2\";\nmessage TestMessage {\n    optional string test_string = 1;\n}\n",
       {},
       {},
       {"REQUIRED_FIELD_REMOVED #/TestMessage/2"}},
      {"Detect changed field number",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 2;\n}",
       {},
       {},
       {}},
      {"Detect compatible field number type change",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    int32 test_int = 2;\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    int64 test_int = 2;\n}",
       {},
       {},
       {}},
      {"Detect compatible field string type change",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    string test_string2 = 2;\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    bytes test_string2 = 2;\n}",
       {},
       {},
       {}},
      {"Detect field number type to enum change",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    int32 test_int = 2;\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    Status test_int = 2;\n}\nenum "
       "Status {\n    ACTIVE = 0;\n    INACTIVE = 1;\n}",
       {},
       {},
       {}},
      {"Detect enum type to field number change",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    Status test_int = 2;\n}\nenum "
       "Status {\n    ACTIVE = 0;\n    INACTIVE = 1;\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    int32 test_int = 2;\n}",
       {},
       {},
       {}},
      {"Detect field number type to message with same name as enum",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    int32 test_int = 2;\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    .TestMessage.Status test_int = "
       "2;\n    message Status {\n    string test_string = 1;\n    }\n}\nenum Status {\n    ACTIVE = 0;\n    INACTIVE "
       "= 1;\n}",
       {},
       {},
       {"FIELD_KIND_CHANGED #/TestMessage/2"}},
      {"Detect message with same name as enum to field number change",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    .TestMessage.Status test_int = "
       "2;\n    message Status {\n    string test_string = 1;\n    }\n}\nenum Status {\n    ACTIVE = 0;\n    INACTIVE "
       "= 1;\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    int32 test_int = 2;\n}",
       {},
       {},
       {"FIELD_KIND_CHANGED #/TestMessage/2", "MESSAGE_REMOVED #/TestMessage/Status"}},
      {"Detect enum const change",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    Status test_int = 2;\n}\nenum "
       "Status {\n    ACTIVE = 0;\n    INACTIVE = 1;\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    Status test_int = 2;\n}\nenum "
       "Status {\n    ACTIVE = 0;\n    NOT_ACTIVE = 1;\n}",
       {},
       {},
       {}},
      {"Detect compatible field to oneof change",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    string test_string2 = 2;\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    oneof new_oneof {\n        "
       "string test_string2 = 2;\n        int32 other_id = 3;\n}\n}",
       {},
       {},
       {}},
      {"Detect incompatible field to oneof change",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    string test_string2 = 2;\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    oneof new_oneof {\n    string test_string = 1;\n    string "
       "test_string2 = 2;\n        int32 other_id = 3;\n}\n}",
       {},
       {},
       {"MULTIPLE_FIELDS_MOVED_TO_ONEOF #/TestMessage/new_oneof"}},
      {"Detect compatible add field to oneof",
       "syntax = \"proto3\";\nmessage TestMessage {\n    oneof new_oneof {\n    string test_string = 1;\n    string "
       "test_string2 = 2;\n}\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    oneof new_oneof {\n    string test_string = 1;\n    string "
       "test_string2 = 2;\n        int32 other_id = 3;\n}\n}",
       {},
       {},
       {}},
      {"Detect incompatible remove field from oneof",
       "syntax = \"proto3\";\nmessage TestMessage {\n    oneof new_oneof {\n    string test_string = 1;\n    string "
       "test_string2 = 2;\n        int32 other_id = 3;\n}\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    oneof new_oneof {\n    string test_string = 1;\n    string "
       "test_string2 = 2;\n}\n}",
       {},
       {},
       {"ONEOF_FIELD_REMOVED #/TestMessage/new_oneof/3"}},
      {"Detect compatible move field to oneof",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    string test_string2 = 2;\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    oneof new_oneof {\n    string "
       "test_string2 = 2;\n}\n}",
       {},
       {},
       {}},
      {"Detect incompatible move field to oneof",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    oneof new_oneof {\n    string "
       "test_string2 = 2;\n    string test_string3 = 3;\n}\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    oneof new_oneof {\n    string test_string = 1;\n    string "
       "test_string2 = 2;\n    string test_string3 = 3;\n}\n}",
       {},
       {},
       {"FIELD_MOVED_TO_EXISTING_ONEOF #/TestMessage/new_oneof"}},
      {"Detect incompatible move field to renamed oneof",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    oneof new_oneof {\n    string "
       "test_string2 = 2;\n    string test_string3 = 3;\n}\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    oneof new_oneof_2 {\n    string test_string = 1;\n    string "
       "test_string2 = 2;\n    string test_string3 = 3;\n}\n}",
       {},
       {},
       {"FIELD_MOVED_TO_EXISTING_ONEOF #/TestMessage/new_oneof_2"}},
      {"Detect incompatible field type change",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    int32 test_int = 2;\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    TestMessage2 test_int = "
       "2;\n}\nmessage TestMessage2 {\n    string s1 = 1;\n}",
       {},
       {},
       {"FIELD_KIND_CHANGED #/TestMessage/2"}},
      {"Detect incompatible field type change",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    int32 test_int = 2;\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    string test_string2 = 2;\n}",
       {},
       {},
       {"FIELD_SCALAR_KIND_CHANGED #/TestMessage/2"}},
      {"Detect incompatible field type change",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    TestMessage2 test_int = "
       "2;\n}\nmessage TestMessage2 {\n    string s1 = 1;\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    TestMessage3 test_int = "
       "2;\n}\nmessage TestMessage3 {\n    string s1 = 1;\n}",
       {},
       {},
       {"MESSAGE_REMOVED #/TestMessage2", "FIELD_NAMED_TYPE_CHANGED #/TestMessage/2"}},
      {"Detect incompatible field type change",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    map<string, int32> test_map_int "
       "= 2;\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    map<string, string> "
       "test_map_string = 2;\n}",
       {},
       {},
       {"FIELD_SCALAR_KIND_CHANGED #/TestMessage/2"}},
      {"Detect compatible name qualification in map",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    map<string, Status> test_map = "
       "2;\n    message Status {\n    string test_string = 1;\n    }\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    map<string, TestMessage.Status> "
       "test_map = 2;\n    message Status {\n    string test_string = 1;\n    }\n}",
       {},
       {},
       {}},
      {"Detect compatible field label change for message",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    optional Status test_status = "
       "2;\n    message Status {\n    string test_string = 1;\n    }\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n    repeated Status test_status = "
       "2;\n    message Status {\n    string test_string = 1;\n    }\n}",
       {},
       {},
       {}},
      {"Detect compatible field label change for string",
       "syntax = \"proto3\";\nmessage TestMessage {\n    optional string test_string = 1;\n    Status test_status = "
       "2;\n    message Status {\n    string test_string = 1;\n    }\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    repeated string test_string = 1;\n    Status test_status = "
       "2;\n    message Status {\n    string test_string = 1;\n    }\n}",
       {},
       {},
       {}},
      {"Detect compatible field label change for bytes",
       "syntax = \"proto3\";\nmessage TestMessage {\n    optional bytes test_bytes = 1;\n    Status test_status = 2;\n "
       "   message Status {\n    string test_string = 1;\n    }\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    repeated bytes test_bytes = 1;\n    Status test_status = 2;\n "
       "   message Status {\n    string test_string = 1;\n    }\n}",
       {},
       {},
       {}},
      {"Detect incompatible field label change for number",
       "syntax = \"proto3\";\nmessage TestMessage {\n    optional int32 test_int = 1;\n    Status test_status = 2;\n   "
       " message Status {\n    string test_string = 1;\n    }\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    repeated int32 test_int = 1;\n    Status test_status = 2;\n   "
       " message Status {\n    string test_string = 1;\n    }\n}",
       {},
       {},
       {"FIELD_NUMERIC_LABEL_CHANGED #/TestMessage/1"}},
      {"Detect compatible message addition",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n}",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n}\nmessage TestMessage2 {\n    "
       "string test_string = 1;\n}",
       {},
       {},
       {}},
      {"Detect compatible message index change",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n}",
       "syntax = \"proto3\";\nmessage TestMessage2 {\n    string test_string = 1;\n}\nmessage TestMessage {\n    "
       "string test_string = 1;\n}",
       {},
       {},
       {}},
      {"Detect compatible message index change",
       "syntax = \"proto3\";\nmessage TestMessage {\n    string test_string = 1;\n}\nmessage TestMessage2 {\n    "
       "string test_string = 1;\n}",
       "syntax = \"proto3\";\nmessage TestMessage2 {\n    string test_string = 1;\n}\nmessage TestMessage {\n    "
       "string test_string = 1;\n}",
       {},
       {},
       {}},
      {"Detect incompatible import change",
       "syntax = \"proto3\";\nimport \"google.proto\";\nmessage TestMessage {\n    "
       ".io.confluent.cloud.demo.domain.GoogleHome test_string = 1;\n    }",
       "syntax = \"proto3\";\nimport \"google2.proto\";\nmessage TestMessage {\n    "
       ".io.confluent.cloud.demo.domain.GoogleHome test_string = 1;\n    }",
       {{"google.proto",
         "syntax = \"proto3\";\n\npackage io.confluent.cloud.demo.domain;\n\noption java_outer_classname = "
         "\"GoogleImpl\";\n\nmessage GoogleHome {\n  int32 deviceID = 1;\n  bool enabled = 2;\n}"}},
       {{"google2.proto",
         "syntax = \"proto3\";\n\npackage io.confluent.cloud.demo.domain;\n\noption java_outer_classname = "
         "\"GoogleImpl2\";\n\nmessage GoogleHome {\n  string deviceID = 1;\n  bool enabled = 2;\n}"}},
       {"FIELD_SCALAR_KIND_CHANGED #/GoogleHome/1", "FIELD_NAMED_TYPE_CHANGED #/TestMessage/1"}},
      {"Detect moving to import",
       "syntax = \"proto3\";\nmessage TestMessage {\n    GoogleHome test_string = 1;\n    }\nmessage GoogleHome {\n  "
       "int32 deviceID = 1;\n  bool enabled = 2;\n}",
       "syntax = \"proto3\";\nimport \"google.proto\";\nmessage TestMessage {\n    "
       ".io.confluent.cloud.demo.domain.GoogleHome test_string = 1;\n    }",
       {},
       {{"google.proto",
         "syntax = \"proto3\";\n\npackage io.confluent.cloud.demo.domain;\n\noption java_outer_classname = "
         "\"GoogleImpl\";\n\nmessage GoogleHome {\n  int32 deviceID = 1;\n  bool enabled = 2;\n}"}},
       {"MESSAGE_REMOVED #/GoogleHome"}},
      {"Detect moving from import",
       "syntax = \"proto3\";\nimport \"google.proto\";\nmessage TestMessage {\n    "
       ".io.confluent.cloud.demo.domain.GoogleHome test_string = 1;\n    }",
       "syntax = \"proto3\";\nmessage TestMessage {\n    GoogleHome test_string = 1;\n    }\nmessage GoogleHome {\n  "
       "int32 deviceID = 1;\n  bool enabled = 2;\n}",
       {{"google.proto",
         "syntax = \"proto3\";\n\npackage io.confluent.cloud.demo.domain;\n\noption java_outer_classname = "
         "\"GoogleImpl\";\n\nmessage GoogleHome {\n  int32 deviceID = 1;\n  bool enabled = 2;\n}"}},
       {},
       {}},
      {"Detect import change with different remote package name",
       "syntax = \"proto3\";\nimport \"google.proto\";\nmessage TestMessage {\n    "
       ".io.confluent.cloud.demo.domain.GoogleHome test_string = 1;\n    }",
       "syntax = \"proto3\";\nimport \"google2.proto\";\nmessage TestMessage {\n    "
       ".io.confluent.cloud.demo.domain2.GoogleHome test_string = 1;\n    }",
       {{"google.proto",
         "syntax = \"proto3\";\n\npackage io.confluent.cloud.demo.domain;\n\noption java_outer_classname = "
         "\"GoogleImpl\";\n\nmessage GoogleHome {\n  int32 deviceID = 1;\n  bool enabled = 2;\n}"}},
       {{"google2.proto",
         "syntax = \"proto3\";\n\npackage io.confluent.cloud.demo.domain2;\n\noption java_outer_classname = "
         "\"GoogleImpl2\";\n\nmessage GoogleHome {\n  int32 deviceID = 1;\n  bool enabled = 2;\n}"}},
       {}},
      {"Detect import change with different remote package nested name",
       "syntax = \"proto3\";\nimport \"google.proto\";\nmessage TestMessage {\n    "
       ".io.confluent.cloud.demo.domain.outer.GoogleHome test_string = 1;\n    }",
       "syntax = \"proto3\";\nimport \"google2.proto\";\nmessage TestMessage {\n    "
       ".io.confluent.cloud.demo.domain2.outer.GoogleHome test_string = 1;\n    }",
       {{"google.proto",
         "syntax = \"proto3\";\n\npackage io.confluent.cloud.demo.domain;\n\noption java_outer_classname = "
         "\"GoogleImpl\";\n\nmessage outer {\n  message GoogleHome {\n  int32 deviceID = 1;\n  bool enabled = "
         "2;\n}\n}"}},
       {{"google2.proto",
         "syntax = \"proto3\";\n\npackage io.confluent.cloud.demo.domain2;\n\noption java_outer_classname = "
         "\"GoogleImpl2\";\n\nmessage outer {\n  message GoogleHome {\n  int32 deviceID = 1;\n  bool enabled = "
         "2;\n}\n}"}},
       {}},
      {"Detect incompatible import change with different remote package nested name",
       "syntax = \"proto3\";\nimport \"google.proto\";\nmessage TestMessage {\n    "
       ".io.confluent.cloud.demo.domain.outer.GoogleHome test_string = 1;\n    }",
       "syntax = \"proto3\";\nimport \"google2.proto\";\nmessage TestMessage {\n    "
       ".io.confluent.cloud.demo.domain2.outer.GoogleHome test_string = 1;\n    }",
       {{"google.proto",
         "syntax = \"proto3\";\n\npackage io.confluent.cloud.demo.domain;\n\noption java_outer_classname = "
         "\"GoogleImpl\";\n\nmessage outer {\n  message GoogleHome {\n  int32 deviceID = 1;\n  bool enabled = "
         "2;\n}\n}"}},
       {{"google2.proto",
         "syntax = \"proto3\";\n\npackage io.confluent.cloud.demo.domain2;\n\noption java_outer_classname = "
         "\"GoogleImpl2\";\n\nmessage outer {\n  message GoogleHome {\n  string deviceID = 1;\n  bool enabled = "
         "2;\n}\n}"}},
       {"FIELD_SCALAR_KIND_CHANGED #/outer/GoogleHome/1", "FIELD_NAMED_TYPE_CHANGED #/TestMessage/1"}},
      {"Detect incompatible import change with same subject, different version",
       "syntax = \"proto3\";\nimport \"google.proto\";\nmessage TestMessage {\n    "
       ".io.confluent.cloud.demo.domain.outer.GoogleHome test_string = 1;\n    }",
       "syntax = \"proto3\";\nimport \"google.proto\";\nmessage TestMessage {\n    "
       ".io.confluent.cloud.demo.domain2.outer.GoogleHome test_string = 1;\n    }",
       {{"google.proto",
         "syntax = \"proto3\";\n\npackage io.confluent.cloud.demo.domain;\n\noption java_outer_classname = "
         "\"GoogleImpl\";\n\nmessage outer {\n  message GoogleHome {\n  int32 deviceID = 1;\n  bool enabled = "
         "2;\n}\n}"}},
       {{"google.proto",
         "syntax = \"proto3\";\n\npackage io.confluent.cloud.demo.domain2;\n\noption java_outer_classname = "
         "\"GoogleImpl2\";\n\nmessage outer {\n  message GoogleHome {\n  string deviceID = 1;\n  bool enabled = "
         "2;\n}\n}"}},
       {"FIELD_SCALAR_KIND_CHANGED #/outer/GoogleHome/1", "FIELD_NAMED_TYPE_CHANGED #/TestMessage/1"}},
      {"Detect incompatible field type change when enclosing oneof is renamed",
       "syntax = \"proto3\";\nmessage Message {\n  oneof oldOneOf {\n    float field_float = 1;\n    int32 "
       "field_with_incompatible_type_change = 2;\n  }\n}\n",
       "syntax = \"proto3\";\nmessage Message {\n  oneof renamedOneOf {\n    float field_float = 1;\n    string "
       "field_with_incompatible_type_change = 2;\n  }\n}\n",
       {},
       {},
       {"FIELD_SCALAR_KIND_CHANGED #/Message/renamedOneOf/2"}},
      {"Detect incompatible field type change when field is moved out of a removed oneof",
       "syntax = \"proto3\";\nmessage Message {\n  oneof oldOneOf {\n    float field_float = 1;\n    int32 "
       "field_with_incompatible_type_change = 2;\n  }\n}\n",
       "syntax = \"proto3\";\nmessage Message {\n  float field_float = 1;\n  sint64 "
       "field_with_incompatible_type_change = 2;\n}\n",
       {},
       {},
       {"FIELD_SCALAR_KIND_CHANGED #/Message/2"}},
      {"Detect incompatible field type change when field is moved into a new oneof",
       "syntax = \"proto3\";\nmessage Message {\n  float field_float = 1;\n  int32 field_with_incompatible_type_change "
       "= 2;\n}\n",
       "syntax = \"proto3\";\nmessage Message {\n  float field_float = 1;\n  oneof newOneOf {\n    sint64 "
       "field_with_incompatible_type_change = 2;\n  }\n}\n",
       {},
       {},
       {"FIELD_SCALAR_KIND_CHANGED #/Message/newOneOf/2"}},
      {"Detect compatible oneof rename with identical fields",
       "syntax = \"proto3\";\nmessage Message {\n  oneof oldOneOf {\n    float field_float = 1;\n    int32 field_int = "
       "2;\n  }\n}\n",
       "syntax = \"proto3\";\nmessage Message {\n  oneof renamedOneOf {\n    float field_float = 1;\n    int32 "
       "field_int = 2;\n  }\n}\n",
       {},
       {},
       {}},
      {"Detect incompatible field move between two differently-named oneofs",
       "syntax = \"proto3\";\nmessage Message {\n  oneof oneof_a {\n    int32 field_1 = 1;\n    int32 field_2 = 2;\n  "
       "}\n  oneof oneof_b {\n    int32 field_3 = 3;\n  }\n}\n",
       "syntax = \"proto3\";\nmessage Message {\n  oneof oneof_a {\n    int32 field_1 = 1;\n  }\n  oneof oneof_b {\n   "
       " int32 field_3 = 3;\n    int32 field_2 = 2;\n  }\n}\n",
       {},
       {},
       {"FIELD_MOVED_TO_EXISTING_ONEOF #/Message/oneof_b"}},
      {"Detect incompatible move of a field from a deleted oneof into an existing oneof",
       "syntax = \"proto3\";\nmessage Message {\n  oneof oneof_a { int32 field_a = 1; }\n  oneof oneof_b { int32 "
       "field_b = 3; }\n}\n",
       "syntax = \"proto3\";\nmessage Message {\n  oneof oneof_b { int32 field_b = 3; int32 field_a = 1; }\n}\n",
       {},
       {},
       {"FIELD_MOVED_TO_EXISTING_ONEOF #/Message/oneof_b"}},
      {"Detect incompatible merge of two oneofs into a new oneof",
       "syntax = \"proto3\";\nmessage Message {\n  oneof oneof_a { int32 field_a = 1; }\n  oneof oneof_b { int32 "
       "field_b = 2; }\n}\n",
       "syntax = \"proto3\";\nmessage Message {\n  oneof oneof_c { int32 field_a = 1; int32 field_b = 2; }\n}\n",
       {},
       {},
       {"FIELD_MOVED_TO_EXISTING_ONEOF #/Message/oneof_c"}},
      {"Detect compatible move of a single field into a new singleton oneof from a surviving oneof",
       "syntax = \"proto3\";\nmessage Message {\n  oneof oneof_a { int32 field_a = 1; int32 field_b = 2; }\n}\n",
       "syntax = \"proto3\";\nmessage Message {\n  oneof oneof_a { int32 field_b = 2; }\n  oneof oneof_b { int32 "
       "field_a = 1; }\n}\n",
       {},
       {},
       {}},
      {"Detect incompatible drop of a oneof member while renaming the oneof",
       "syntax = \"proto3\";\nmessage Message {\n  oneof g { int32 a = 1; int32 b = 2; }\n}\n",
       "syntax = \"proto3\";\nmessage Message {\n  oneof g2 { int32 a = 1; }\n}\n",
       {},
       {},
       {"ONEOF_FIELD_REMOVED #/Message/g/2"}},
      {"Detect compatible move field out of a oneof to top level",
       "syntax = \"proto3\";\nmessage Message {\n  oneof oneof_x {\n    int32 field_a = 1;\n    int32 field_b = 2;\n  "
       "}\n}\n",
       "syntax = \"proto3\";\nmessage Message {\n  oneof oneof_x {\n    int32 field_a = 1;\n  }\n  int32 field_b = "
       "2;\n}\n",
       {},
       {},
       {}},
      {"Detect incompatible type change when field moved out of a oneof to top level",
       "syntax = \"proto3\";\nmessage Message {\n  oneof oneof_x {\n    int32 field_a = 1;\n    int32 field_b = 2;\n  "
       "}\n}\n",
       "syntax = \"proto3\";\nmessage Message {\n  oneof oneof_x {\n    int32 field_a = 1;\n  }\n  string field_b = "
       "2;\n}\n",
       {},
       {},
       {"FIELD_SCALAR_KIND_CHANGED #/Message/2"}},
  };
  return vectors;
}

}  // namespace ferry::proto_schema::testing
