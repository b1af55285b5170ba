/*
 * dlclose_plugin: a plugin that uses libsrcu while its host does not link
 * it (test_dlclose loads and unloads it).  The plugin's dependency on
 * libsrcu.so is what brings the library in.
 *
 * SPDX-License-Identifier: MIT
 */
#include "srcu.h"

static struct srcu_struct plugin_dom = SRCU_INITIALIZER(plugin_dom);

__attribute__((visibility("default"))) void plugin_read(void)
{
	int idx = srcu_read_lock(&plugin_dom);

	srcu_read_unlock(&plugin_dom, idx);
}

/* Before the host unloads the plugin: no section is open any more. */
__attribute__((visibility("default"))) int plugin_fini(void)
{
	synchronize_srcu(&plugin_dom);
	return cleanup_srcu_struct(&plugin_dom);
}
