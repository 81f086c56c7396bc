# install.cmake — what `cmake --install` puts where, so that other projects can build against an
# installed ffn: the header, both libraries and the tool, a CMake package (`find_package(ffn)`
# gives the targets ffn::ffn, the shared library, and ffn::ffn_static) and a pkg-config file
# (`pkg-config --cflags --libs ffn`; `--static` adds the static library's dependencies).
# Included at the end of the top-level CMakeLists.txt, once every library dependency has been
# added to FFN_LINK.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(FILES include/ffn.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ffn_shared ffn_static ffn_tool
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The static library's link dependencies, from FFN_LINK: imported pkg-config targets become the
# libraries they name, OpenMP and the CUDA toolkit stay targets (the package config finds them
# again), anything else (m) stays a library name. The same list, as -l flags, is the .pc file's
# Libs.private.
set(FFN_STATIC_DEPS "")
set(FFN_PC_PRIVATE "")
set(FFN_FIND_DEPS "")
foreach(dep IN LISTS FFN_LINK)
  if(dep MATCHES "^OpenMP::")
    string(APPEND FFN_FIND_DEPS "find_dependency(OpenMP COMPONENTS C)\n")
    list(APPEND FFN_STATIC_DEPS ${dep})
    string(APPEND FFN_PC_PRIVATE " ${OpenMP_C_FLAGS}")
  elseif(dep MATCHES "^CUDA::")
    # The CUDA objects are C++ (nvcc), so a static link also needs libstdc++; pkg-config gets
    # the runtime's archive by its path (the toolkit's folder is not on the linker's path).
    string(APPEND FFN_FIND_DEPS "find_dependency(CUDAToolkit)\n")
    list(APPEND FFN_STATIC_DEPS ${dep} stdc++)
    get_target_property(loc ${dep} IMPORTED_LOCATION)
    string(APPEND FFN_PC_PRIVATE " ${loc} -ldl -lrt -lpthread -lstdc++")
  elseif(TARGET ${dep})
    get_target_property(libs ${dep} INTERFACE_LINK_LIBRARIES)
    foreach(l IN LISTS libs)
      list(APPEND FFN_STATIC_DEPS ${l})
      get_filename_component(base "${l}" NAME)
      if(base MATCHES "^lib(.+)\\.(so|a)(\\..*)?$")
        string(APPEND FFN_PC_PRIVATE " -l${CMAKE_MATCH_1}")
      else()
        string(APPEND FFN_PC_PRIVATE " -l${base}")
      endif()
    endforeach()
  elseif(IS_ABSOLUTE "${dep}")
    list(APPEND FFN_STATIC_DEPS ${dep})
    get_filename_component(base "${dep}" NAME)
    string(REGEX REPLACE "^lib(.+)\\.(so|a)(\\..*)?$" "\\1" lib "${base}")
    string(APPEND FFN_PC_PRIVATE " -l${lib}")
  else()
    list(APPEND FFN_STATIC_DEPS ${dep})
    string(APPEND FFN_PC_PRIVATE " -l${dep}")
  endif()
endforeach()
list(REMOVE_DUPLICATES FFN_STATIC_DEPS)
string(STRIP "${FFN_PC_PRIVATE}" FFN_PC_PRIVATE)

set(FFN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ffn)
configure_package_config_file(cmake/ffnConfig.cmake.in ${CMAKE_BINARY_DIR}/ffnConfig.cmake
                              INSTALL_DESTINATION ${FFN_CMAKE_DIR}
                              PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/ffnConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/ffnConfig.cmake ${CMAKE_BINARY_DIR}/ffnConfigVersion.cmake
        DESTINATION ${FFN_CMAKE_DIR})

# The .pc file finds its prefix from where it lies (pkg-config's ${pcfiledir}), so an installed
# tree can be moved or installed with `cmake --install --prefix DIR`.
file(RELATIVE_PATH FFN_PC_UP /ffn-prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /ffn-prefix)
configure_file(cmake/ffn.pc.in ${CMAKE_BINARY_DIR}/ffn.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/ffn.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
