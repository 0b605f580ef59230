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

"""Sphinx configuration for the Cyborg release notes (built by reno)."""

extensions = [
    'openstackdocstheme',
    'reno.sphinxext',
]

source_suffix = '.rst'
master_doc = 'index'
exclude_patterns = []

project = 'Cyborg Release Notes'
copyright = '2025, OpenStack Foundation'

# Release notes are not tied to one version of the code.
version = ''
release = ''

pygments_style = 'native'

# -- openstackdocstheme ------------------------------------------------------

openstackdocs_repo_name = 'openstack/cyborg'
openstackdocs_bug_project = 'openstack-cyborg'
openstackdocs_bug_tag = 'releasenotes'
openstackdocs_use_storyboard = False
openstackdocs_auto_name = False

# -- Options for HTML output -------------------------------------------------

html_theme = 'openstackdocs'
html_static_path = []

# -- Options for Internationalization output ---------------------------------

locale_dirs = ['locale/']
