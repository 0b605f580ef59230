# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.

"""Sphinx configuration for the Cyborg API reference (api-ref/source)."""

extensions = [
    'openstackdocstheme',
    'os_api_ref',
]

source_suffix = '.rst'
master_doc = 'index'
exclude_patterns = []

project = 'Accelerator API Reference'
copyright = '2025, OpenStack Foundation'

# The API reference describes every microversion, not one release.
version = ''
release = ''

add_module_names = False
show_authors = False
pygments_style = 'native'

# -- openstackdocstheme ------------------------------------------------------

openstackdocs_repo_name = 'openstack/cyborg'
openstackdocs_bug_project = 'openstack-cyborg'
openstackdocs_bug_tag = 'api-ref'
openstackdocs_use_storyboard = False
openstackdocs_auto_name = False

# -- Options for HTML output -------------------------------------------------

html_theme = 'openstackdocs'
html_theme_options = {
    'sidebar_mode': 'toc',
}
html_static_path = []
