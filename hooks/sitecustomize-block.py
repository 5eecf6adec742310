# >>> sitewarden guard >>> added by `sitewarden install --hook sitecustomize`; `sitewarden uninstall` removes it
try:
    import os as _sitewarden_os
    if _sitewarden_os.environ.get('SITEWARDEN_DISABLE', '0') in ('', '0'):
        __import__('sitewarden').activate()
    del _sitewarden_os
except Exception:
    pass
# <<< sitewarden guard <<<
