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
"""Cyborg's versioned objects."""


def register_all():
    # Importing a module registers its objects with the registry.
    __import__('cyborg.objects.accelerator_request')
    __import__('cyborg.objects.attach_handle')
    __import__('cyborg.objects.attribute')
    __import__('cyborg.objects.control_path')
    __import__('cyborg.objects.deployable')
    __import__('cyborg.objects.cyborg17_report')
    __import__('cyborg.objects.device')
    __import__('cyborg.objects.device_profile')
    __import__('cyborg.objects.driver_report')
    __import__('cyborg.objects.host')
    __import__('cyborg.objects.nova_event')
