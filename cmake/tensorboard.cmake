# ---- tools/tensorboard/: SummaryWriter, TensorBoard event files (protobuf) ----------------
# Included from CMakeLists.txt once the ember target exists. EMBER_TENSORBOARD=AUTO builds the
# writer when protobuf (Debian: libprotobuf-dev + protobuf-compiler) is found, ON requires it,
# OFF skips it. Without it, no_tensorboard.cpp stands in for the protobuf part: programs using
# SummaryWriter still compile and link, and creating one raises ember::Error.
# The CRC/record framing, histogram binning and event-file queue are plain C++, built always.
# Protobuf stays PRIVATE: the generated classes are internal (summary_writer.h does not use them).
set(EMBER_TENSORBOARD "AUTO" CACHE STRING "Build SummaryWriter's TensorBoard event files (needs protobuf): AUTO, ON or OFF")
set_property(CACHE EMBER_TENSORBOARD PROPERTY STRINGS AUTO ON OFF)
set(EMBER_WITH_TENSORBOARD OFF)
if(NOT EMBER_TENSORBOARD STREQUAL "OFF")
  find_package(Protobuf QUIET)
  if(Protobuf_FOUND AND TARGET protobuf::libprotobuf AND TARGET protobuf::protoc)
    set(EMBER_WITH_TENSORBOARD ON)
  elseif(EMBER_TENSORBOARD STREQUAL "ON")
    message(FATAL_ERROR "EMBER_TENSORBOARD=ON but protobuf (library and protoc) was not found: install "
      "libprotobuf-dev and protobuf-compiler, or configure with -DEMBER_TENSORBOARD=OFF")
  endif()
endif()

set(EMBER_TENSORBOARD_DIR ${CMAKE_CURRENT_SOURCE_DIR}/tools/tensorboard)
target_sources(ember PRIVATE ${EMBER_TENSORBOARD_DIR}/record_writer.cpp ${EMBER_TENSORBOARD_DIR}/histogram.cpp
  ${EMBER_TENSORBOARD_DIR}/event_file_writer.cpp ${EMBER_TENSORBOARD_DIR}/summary_writer.cpp)
# numpy.linspace rounds i * step and + start separately; a fused multiply-add would move edges.
set_source_files_properties(${EMBER_TENSORBOARD_DIR}/histogram.cpp PROPERTIES COMPILE_OPTIONS "-ffp-contract=off")
if(EMBER_WITH_TENSORBOARD)
  # tensorboard_events.pb.{h,cc} generated into the build tree; the tests read records back
  # through the same classes (EMBER_TENSORBOARD_PROTO_DIR).
  set(EMBER_TENSORBOARD_PROTO_DIR ${CMAKE_CURRENT_BINARY_DIR}/tensorboard_proto)
  file(MAKE_DIRECTORY ${EMBER_TENSORBOARD_PROTO_DIR})
  add_custom_command(
    OUTPUT ${EMBER_TENSORBOARD_PROTO_DIR}/tensorboard_events.pb.cc ${EMBER_TENSORBOARD_PROTO_DIR}/tensorboard_events.pb.h
    COMMAND protobuf::protoc --cpp_out=${EMBER_TENSORBOARD_PROTO_DIR} -I${EMBER_TENSORBOARD_DIR}
      ${EMBER_TENSORBOARD_DIR}/tensorboard_events.proto
    DEPENDS ${EMBER_TENSORBOARD_DIR}/tensorboard_events.proto protobuf::protoc
    COMMENT "protoc: tools/tensorboard/tensorboard_events.proto"
    VERBATIM)
  target_sources(ember PRIVATE ${EMBER_TENSORBOARD_DIR}/event_encoding.cpp
    ${EMBER_TENSORBOARD_PROTO_DIR}/tensorboard_events.pb.cc)
  target_include_directories(ember PRIVATE ${EMBER_TENSORBOARD_PROTO_DIR})
  target_link_libraries(ember PRIVATE protobuf::libprotobuf)
  message(STATUS "ember: TensorBoard SummaryWriter ON (protobuf ${Protobuf_VERSION})")
else()
  target_sources(ember PRIVATE ${EMBER_TENSORBOARD_DIR}/no_tensorboard.cpp)
  message(STATUS "ember: TensorBoard SummaryWriter OFF (no protobuf): creating one raises ember::Error")
endif()
# A static ember carries protobuf into its users' link (emberConfig.cmake finds it for them).
set(EMBER_CONFIG_FIND_PROTOBUF OFF)
if(EMBER_WITH_TENSORBOARD AND NOT BUILD_SHARED_LIBS)
  set(EMBER_CONFIG_FIND_PROTOBUF ON)
endif()
include(GNUInstallDirs)
install(FILES ${EMBER_TENSORBOARD_DIR}/summary_writer.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ember/tools/tensorboard)
