# The libtorch drop-in, installed with ember (EMBER_INSTALL_TORCH): the headers of compat/include
# (<torch/...>, <ATen/...>, <c10/...>) beside include/ember, compat/namespaces.h as
# <ember/compat/namespaces.h>, and a Torch package (TorchConfig.cmake) on top of ember's, so that
# find_package(Torch REQUIRED) and target_link_libraries(app "${TORCH_LIBRARIES}") work as written
# for libtorch. Included from CMakeLists.txt's install section.
install(DIRECTORY compat/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(FILES compat/namespaces.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ember/compat)

# TORCH_CXX_FLAGS says, as libtorch's does, which libstdc++ string ABI the library was built
# with (-D_GLIBCXX_USE_CXX11_ABI=0|1), so a project that adds it compiles to the same ABI.
include(CheckCXXSourceCompiles)
check_cxx_source_compiles([=[
#include <string>
#if !defined(__GLIBCXX__)
#error not libstdc++
#endif
int main() { return 0; }]=] EMBER_HAS_LIBSTDCXX)
set(EMBER_TORCH_CXX_FLAGS "")
if(EMBER_HAS_LIBSTDCXX)
  check_cxx_source_compiles([=[
#include <string>
#if !_GLIBCXX_USE_CXX11_ABI
#error the old string ABI
#endif
int main() { return 0; }]=] EMBER_LIBSTDCXX_CXX11_ABI)
  if(EMBER_LIBSTDCXX_CXX11_ABI)
    set(EMBER_TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=1")
  else()
    set(EMBER_TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=0")
  endif()
endif()

# Installed where libtorch's archive keeps its own (share/cmake/Torch), so both ways libtorch's
# documentation finds it work: CMAKE_PREFIX_PATH=<prefix>, or Torch_DIR=<prefix>/share/cmake/Torch.
set(EMBER_TORCH_CONFIG_DIR ${CMAKE_INSTALL_DATADIR}/cmake/Torch)
set(EMBER_TORCH_EMBER_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ember)
configure_package_config_file(cmake/TorchConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/TorchConfig.cmake
  INSTALL_DESTINATION ${EMBER_TORCH_CONFIG_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR EMBER_TORCH_EMBER_DIR)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/TorchConfig.cmake DESTINATION ${EMBER_TORCH_CONFIG_DIR})
