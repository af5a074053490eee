// The argument trees COMMAND DOCS shows for the stream commands: Redis 7.0's, argument for
// argument (names, types, tokens and the version that added each option), which the syntax
// strings alone cannot say. Included by the command files only.
#ifndef VESSEL_MODULES_STREAMS_STREAMS_DOCS_H_
#define VESSEL_MODULES_STREAMS_STREAMS_DOCS_H_

#include "vessel/module.h"

namespace vessel::streams::docs {

constexpr uint32_t kArg = sizeof(vsl_command_arg);

// clang-format off
constexpr vsl_command_arg kTrimStrategy[] = {
    {.struct_size = kArg, .type = VSL_ARG_PURE_TOKEN, .name = "maxlen", .token = "MAXLEN"},
    {.struct_size = kArg, .type = VSL_ARG_PURE_TOKEN, .name = "minid", .token = "MINID",
      .since = "6.2.0"}};
constexpr vsl_command_arg kTrimOperator[] = {
    {.struct_size = kArg, .type = VSL_ARG_PURE_TOKEN, .name = "equal", .token = "="},
    {.struct_size = kArg, .type = VSL_ARG_PURE_TOKEN, .name = "approximately", .token = "~"}};
constexpr vsl_command_arg kTrim[] = {
    {.struct_size = kArg, .type = VSL_ARG_ONEOF, .name = "strategy", .subargs = kTrimStrategy,
      .n_subargs = 2},
    {.struct_size = kArg, .type = VSL_ARG_ONEOF, .name = "operator", .flags = VSL_ARG_OPTIONAL,
      .subargs = kTrimOperator, .n_subargs = 2},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "threshold"},
    {.struct_size = kArg, .type = VSL_ARG_INTEGER, .name = "count", .token = "LIMIT",
      .flags = VSL_ARG_OPTIONAL, .since = "6.2.0"}};
constexpr vsl_command_arg kXAddIdOrAuto[] = {
    {.struct_size = kArg, .type = VSL_ARG_PURE_TOKEN, .name = "auto_id", .token = "*"},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "id"}};
constexpr vsl_command_arg kXAddFieldValue[] = {
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "field"},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "value"}};
constexpr vsl_command_arg kXAddArgs[] = {
    {.struct_size = kArg, .type = VSL_ARG_KEY, .name = "key", .key_spec_index = 0},
    {.struct_size = kArg, .type = VSL_ARG_PURE_TOKEN, .name = "nomkstream",
      .token = "NOMKSTREAM", .flags = VSL_ARG_OPTIONAL, .since = "6.2.0"},
    {.struct_size = kArg, .type = VSL_ARG_BLOCK, .name = "trim", .flags = VSL_ARG_OPTIONAL,
      .subargs = kTrim, .n_subargs = 4},
    {.struct_size = kArg, .type = VSL_ARG_ONEOF, .name = "id_or_auto", .subargs = kXAddIdOrAuto,
      .n_subargs = 2},
    {.struct_size = kArg, .type = VSL_ARG_BLOCK, .name = "field_value",
      .flags = VSL_ARG_MULTIPLE, .subargs = kXAddFieldValue, .n_subargs = 2}};
constexpr vsl_command_arg kXTrimArgs[] = {
    {.struct_size = kArg, .type = VSL_ARG_KEY, .name = "key", .key_spec_index = 0},
    {.struct_size = kArg, .type = VSL_ARG_BLOCK, .name = "trim", .subargs = kTrim, .n_subargs = 4}};
constexpr vsl_command_arg kXSetIdArgs[] = {
    {.struct_size = kArg, .type = VSL_ARG_KEY, .name = "key", .key_spec_index = 0},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "last-id"},
    {.struct_size = kArg, .type = VSL_ARG_INTEGER, .name = "entries_added",
      .token = "ENTRIESADDED", .flags = VSL_ARG_OPTIONAL, .since = "7.0.0"},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "max_deleted_entry_id",
      .token = "MAXDELETEDID", .flags = VSL_ARG_OPTIONAL, .since = "7.0.0"}};
constexpr vsl_command_arg kXRangeArgs[] = {
    {.struct_size = kArg, .type = VSL_ARG_KEY, .name = "key", .key_spec_index = 0},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "start"},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "end"},
    {.struct_size = kArg, .type = VSL_ARG_INTEGER, .name = "count", .token = "COUNT",
      .flags = VSL_ARG_OPTIONAL}};
constexpr vsl_command_arg kXRevRangeArgs[] = {
    {.struct_size = kArg, .type = VSL_ARG_KEY, .name = "key", .key_spec_index = 0},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "end"},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "start"},
    {.struct_size = kArg, .type = VSL_ARG_INTEGER, .name = "count", .token = "COUNT",
      .flags = VSL_ARG_OPTIONAL}};
constexpr vsl_command_arg kXLenArgs[] = {
    {.struct_size = kArg, .type = VSL_ARG_KEY, .name = "key", .key_spec_index = 0}};
constexpr vsl_command_arg kXDelArgs[] = {
    {.struct_size = kArg, .type = VSL_ARG_KEY, .name = "key", .key_spec_index = 0},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "id", .flags = VSL_ARG_MULTIPLE}};
constexpr vsl_command_arg kStreamsBlock[] = {
    {.struct_size = kArg, .type = VSL_ARG_KEY, .name = "key", .flags = VSL_ARG_MULTIPLE,
      .key_spec_index = 0},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "id", .flags = VSL_ARG_MULTIPLE}};
constexpr vsl_command_arg kXReadArgs[] = {
    {.struct_size = kArg, .type = VSL_ARG_INTEGER, .name = "count", .token = "COUNT",
      .flags = VSL_ARG_OPTIONAL},
    {.struct_size = kArg, .type = VSL_ARG_INTEGER, .name = "milliseconds", .token = "BLOCK",
      .flags = VSL_ARG_OPTIONAL},
    {.struct_size = kArg, .type = VSL_ARG_BLOCK, .name = "streams", .token = "STREAMS",
      .subargs = kStreamsBlock, .n_subargs = 2}};
constexpr vsl_command_arg kXReadGroupConsumer[] = {
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "group"},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "consumer"}};
constexpr vsl_command_arg kXReadGroupArgs[] = {
    {.struct_size = kArg, .type = VSL_ARG_BLOCK, .name = "group_consumer", .token = "GROUP",
      .subargs = kXReadGroupConsumer, .n_subargs = 2},
    {.struct_size = kArg, .type = VSL_ARG_INTEGER, .name = "count", .token = "COUNT",
      .flags = VSL_ARG_OPTIONAL},
    {.struct_size = kArg, .type = VSL_ARG_INTEGER, .name = "milliseconds", .token = "BLOCK",
      .flags = VSL_ARG_OPTIONAL},
    {.struct_size = kArg, .type = VSL_ARG_PURE_TOKEN, .name = "noack", .token = "NOACK",
      .flags = VSL_ARG_OPTIONAL},
    {.struct_size = kArg, .type = VSL_ARG_BLOCK, .name = "streams", .token = "STREAMS",
      .subargs = kStreamsBlock, .n_subargs = 2}};
constexpr vsl_command_arg kXAckArgs[] = {
    {.struct_size = kArg, .type = VSL_ARG_KEY, .name = "key", .key_spec_index = 0},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "group"},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "id", .flags = VSL_ARG_MULTIPLE}};
constexpr vsl_command_arg kXPendingFilters[] = {
    {.struct_size = kArg, .type = VSL_ARG_INTEGER, .name = "min-idle-time", .token = "IDLE",
      .flags = VSL_ARG_OPTIONAL, .since = "6.2.0"},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "start"},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "end"},
    {.struct_size = kArg, .type = VSL_ARG_INTEGER, .name = "count"},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "consumer", .flags = VSL_ARG_OPTIONAL}};
constexpr vsl_command_arg kXPendingArgs[] = {
    {.struct_size = kArg, .type = VSL_ARG_KEY, .name = "key", .key_spec_index = 0},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "group"},
    {.struct_size = kArg, .type = VSL_ARG_BLOCK, .name = "filters", .flags = VSL_ARG_OPTIONAL,
      .subargs = kXPendingFilters, .n_subargs = 5}};
constexpr vsl_command_arg kXClaimArgs[] = {
    {.struct_size = kArg, .type = VSL_ARG_KEY, .name = "key", .key_spec_index = 0},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "group"},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "consumer"},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "min-idle-time"},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "id", .flags = VSL_ARG_MULTIPLE},
    {.struct_size = kArg, .type = VSL_ARG_INTEGER, .name = "ms", .token = "IDLE",
      .flags = VSL_ARG_OPTIONAL},
    {.struct_size = kArg, .type = VSL_ARG_UNIX_TIME, .name = "unix-time-milliseconds",
      .token = "TIME", .flags = VSL_ARG_OPTIONAL},
    {.struct_size = kArg, .type = VSL_ARG_INTEGER, .name = "count", .token = "RETRYCOUNT",
      .flags = VSL_ARG_OPTIONAL},
    {.struct_size = kArg, .type = VSL_ARG_PURE_TOKEN, .name = "force", .token = "FORCE",
      .flags = VSL_ARG_OPTIONAL},
    {.struct_size = kArg, .type = VSL_ARG_PURE_TOKEN, .name = "justid", .token = "JUSTID",
      .flags = VSL_ARG_OPTIONAL},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "id", .token = "LASTID",
      .flags = VSL_ARG_OPTIONAL}};
constexpr vsl_command_arg kXAutoClaimArgs[] = {
    {.struct_size = kArg, .type = VSL_ARG_KEY, .name = "key", .key_spec_index = 0},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "group"},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "consumer"},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "min-idle-time"},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "start"},
    {.struct_size = kArg, .type = VSL_ARG_INTEGER, .name = "count", .token = "COUNT",
      .flags = VSL_ARG_OPTIONAL},
    {.struct_size = kArg, .type = VSL_ARG_PURE_TOKEN, .name = "justid", .token = "JUSTID",
      .flags = VSL_ARG_OPTIONAL}};
constexpr vsl_command_arg kGroupId[] = {
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "id"},
    {.struct_size = kArg, .type = VSL_ARG_PURE_TOKEN, .name = "new_id", .token = "$"}};
constexpr vsl_command_arg kXGroupCreateArgs[] = {
    {.struct_size = kArg, .type = VSL_ARG_KEY, .name = "key", .key_spec_index = 0},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "groupname"},
    {.struct_size = kArg, .type = VSL_ARG_ONEOF, .name = "id", .subargs = kGroupId, .n_subargs = 2},
    {.struct_size = kArg, .type = VSL_ARG_PURE_TOKEN, .name = "mkstream", .token = "MKSTREAM",
      .flags = VSL_ARG_OPTIONAL},
    {.struct_size = kArg, .type = VSL_ARG_INTEGER, .name = "entries_read",
      .token = "ENTRIESREAD", .flags = VSL_ARG_OPTIONAL}};
constexpr vsl_command_arg kXGroupSetIdArgs[] = {
    {.struct_size = kArg, .type = VSL_ARG_KEY, .name = "key", .key_spec_index = 0},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "groupname"},
    {.struct_size = kArg, .type = VSL_ARG_ONEOF, .name = "id", .subargs = kGroupId, .n_subargs = 2},
    {.struct_size = kArg, .type = VSL_ARG_INTEGER, .name = "entries_read",
      .token = "ENTRIESREAD", .flags = VSL_ARG_OPTIONAL}};
constexpr vsl_command_arg kXGroupDestroyArgs[] = {
    {.struct_size = kArg, .type = VSL_ARG_KEY, .name = "key", .key_spec_index = 0},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "groupname"}};
constexpr vsl_command_arg kXGroupCreateConsumerArgs[] = {
    {.struct_size = kArg, .type = VSL_ARG_KEY, .name = "key", .key_spec_index = 0},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "groupname"},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "consumername"}};
constexpr vsl_command_arg kXGroupDelConsumerArgs[] = {
    {.struct_size = kArg, .type = VSL_ARG_KEY, .name = "key", .key_spec_index = 0},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "groupname"},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "consumername"}};
constexpr vsl_command_arg kXInfoConsumersArgs[] = {
    {.struct_size = kArg, .type = VSL_ARG_KEY, .name = "key", .key_spec_index = 0},
    {.struct_size = kArg, .type = VSL_ARG_STRING, .name = "groupname"}};
constexpr vsl_command_arg kXInfoGroupsArgs[] = {
    {.struct_size = kArg, .type = VSL_ARG_KEY, .name = "key", .key_spec_index = 0}};
constexpr vsl_command_arg kXInfoStreamFull[] = {
    {.struct_size = kArg, .type = VSL_ARG_INTEGER, .name = "count", .token = "COUNT",
      .flags = VSL_ARG_OPTIONAL}};
constexpr vsl_command_arg kXInfoStreamArgs[] = {
    {.struct_size = kArg, .type = VSL_ARG_KEY, .name = "key", .key_spec_index = 0},
    {.struct_size = kArg, .type = VSL_ARG_BLOCK, .name = "full", .token = "FULL",
      .flags = VSL_ARG_OPTIONAL, .subargs = kXInfoStreamFull, .n_subargs = 1}};

// clang-format on

}  // namespace vessel::streams::docs

#endif  // VESSEL_MODULES_STREAMS_STREAMS_DOCS_H_
