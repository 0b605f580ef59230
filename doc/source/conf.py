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

"""Sphinx configuration for the Cyborg documentation (doc/source)."""

import os
import sys

# Local extensions.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), '_exts'))

# -- General configuration ---------------------------------------------------

extensions = [
    # |conductor_rpc_version| and the other versions the code defines, and
    # a warning for a current version typed by hand.
    'cyborg_versions',
    # The import-linter contracts, rendered on the layer map.
    'cyborg_layers',
    'openstackdocstheme',
    # The layer graph (contributor/layers.dot); needs Graphviz's dot
    # (bindep.txt).
    'sphinx.ext.graphviz',
    # Used by the configuration and policy reference pages.
    'oslo_config.sphinxext',
    'oslo_policy.sphinxext',
    # Write the configuration and policy samples at build time; they are
    # never committed (see .gitignore).
    'oslo_config.sphinxconfiggen',
    'oslo_policy.sphinxpolicygen',
]

source_suffix = '.rst'
master_doc = 'index'
exclude_patterns = ['_build']

project = 'Cyborg'
copyright = '2025, OpenStack Foundation'

# Shown in the rendered pages; cross-references are not allowed to dangle.
nitpicky = True
add_module_names = False
pygments_style = 'native'

# -- Generated samples -------------------------------------------------------

# Paths are relative to this directory, so the build works from any working
# directory. The samples land in _static/, included by the sample pages.
config_generator_config_file = '../../etc/cyborg/cyborg-config-generator.conf'
sample_config_basename = '_static/cyborg'
policy_generator_config_file = '../../etc/cyborg/cyborg-policy-generator.conf'
sample_policy_basename = '_static/cyborg'

# -- openstackdocstheme ------------------------------------------------------

openstackdocs_repo_name = 'openstack/cyborg'
openstackdocs_bug_project = 'openstack-cyborg'
openstackdocs_bug_tag = 'doc'
openstackdocs_use_storyboard = False
openstackdocs_auto_name = False
openstackdocs_pdf_link = False

# -- Options for HTML output -------------------------------------------------

html_theme = 'openstackdocs'

# SVG keeps the layer graph sharp at any zoom.
graphviz_output_format = 'svg'

html_static_path = []
